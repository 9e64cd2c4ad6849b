import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorObject } from '../../src/api/error-object.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';
import { ApiError } from '../../src/server/api-error.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { type PetStatus, PetStore } from '../../src/server/store.ts';
import { call, type Reply } from '../helpers/http.ts';

const ALL = { limit: 1000, offset: 0 };

/** The ApiError a store call throws (fails the test if it throws none or something else). */
function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the call to throw an ApiError');
}

function expectApiError(fn: () => unknown, status: number, code: string): void {
  const error = thrown(fn);
  expect({ status: error.status, code: error.code }).toEqual({ status, code });
}

describe('PetStore state rules', () => {
  let store: PetStore;
  let dogs: number;
  let cats: number;

  /** A pet with the given stock (set through updateInventory, so the status is derived). */
  function petWithStock(quantity: number, categoryId = dogs): number {
    const pet = store.createPet({ name: `pet-${quantity}`, categoryId });
    store.updateInventory(pet.id, { quantity });
    return pet.id;
  }

  beforeEach(() => {
    store = new PetStore(() => Date.UTC(2027, 0, 1));
    dogs = store.createCategory({ name: 'Dogs' }).id;
    cats = store.createCategory({ name: 'Cats', description: 'All cats' }).id;
  });

  describe('ids', () => {
    it('assigns ids incrementally from 1, separately per resource', () => {
      expect([dogs, cats]).toEqual([1, 2]);
      const pets = [0, 1, 2].map((i) => store.createPet({ name: `p${i}`, categoryId: dogs }).id);
      expect(pets).toEqual([1, 2, 3]);
      expect(store.createCategory({ name: 'Birds' }).id).toBe(3);
      const orders = [1, 2].map((petId) => store.placeOrder({ petId }).id);
      expect(orders).toEqual([1, 2]);
    });

    it('never reuses the id of a deleted pet', () => {
      const first = store.createPet({ name: 'a', categoryId: dogs }).id;
      store.deletePet(first);
      expect(store.createPet({ name: 'b', categoryId: dogs }).id).toBe(first + 1);
    });
  });

  describe('rule 1-2: createPet', () => {
    it('defaults the status to available and creates an inventory entry with quantity 1', () => {
      const pet = store.createPet({ name: 'Rex', categoryId: dogs });
      expect(pet).toEqual({ id: pet.id, name: 'Rex', categoryId: dogs, status: 'available' });
      expect(store.getInventoryItem(pet.id)).toEqual({ petId: pet.id, quantity: 1, status: 'available' });
    });

    it.each(['available', 'pending', 'sold'] as const)(
      'keeps an explicit status %s on the entry',
      (status) => {
        const pet = store.createPet({ name: 'Rex', categoryId: dogs, status });
        expect(pet.status).toBe(status);
        expect(store.getInventoryItem(pet.id)).toEqual({ petId: pet.id, quantity: 1, status });
      },
    );

    it('refuses an unknown category with 400 unknown_category and creates nothing', () => {
      expectApiError(() => store.createPet({ name: 'Rex', categoryId: 99 }), 400, 'unknown_category');
      expect(store.listPets({}, ALL)).toEqual([]);
      expect(store.listInventory({}, ALL)).toEqual([]);
    });
  });

  describe('rule 3: placeOrder reserves stock', () => {
    it('takes the quantity from the stock, defaulting to 1', () => {
      const petId = petWithStock(5);
      const order = store.placeOrder({ petId, quantity: 3 });
      expect(order).toEqual({
        id: 1,
        petId,
        quantity: 3,
        shipDate: new Date(Date.UTC(2027, 0, 2)).toISOString(),
        complete: false,
      });
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expect(store.placeOrder({ petId }).quantity).toBe(1);
      expect(store.getInventoryItem(petId).quantity).toBe(1);
    });

    it('refuses more than the stock with 409 insufficient_stock and changes nothing', () => {
      const petId = petWithStock(2);
      expectApiError(() => store.placeOrder({ petId, quantity: 3 }), 409, 'insufficient_stock');
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expect(store.listOrders(ALL)).toEqual([]);
      // The refused order took no id either.
      expect(store.placeOrder({ petId, quantity: 2 }).id).toBe(1);
    });

    it('refuses an unknown pet with 400 unknown_pet', () => {
      expectApiError(() => store.placeOrder({ petId: 42 }), 400, 'unknown_pet');
      expect(store.listOrders(ALL)).toEqual([]);
    });

    it('refuses any order for a pet with stock 0', () => {
      const petId = petWithStock(0);
      expectApiError(() => store.placeOrder({ petId }), 409, 'insufficient_stock');
    });
  });

  describe('rule 4: derived status', () => {
    it('stock 0 with an incomplete order gives pending', () => {
      const petId = petWithStock(1);
      store.placeOrder({ petId });
      expect(store.getPet(petId).status).toBe('pending');
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    });

    it('completing the last open order with stock 0 gives sold; not before', () => {
      const petId = petWithStock(3);
      const a = store.placeOrder({ petId, quantity: 1 });
      const b = store.placeOrder({ petId, quantity: 2 });
      expect(store.getPet(petId).status).toBe('pending');
      expect(store.completeOrder(a.id).complete).toBe(true);
      expect(store.getPet(petId).status).toBe('pending');
      store.completeOrder(b.id);
      expect(store.getPet(petId).status).toBe('sold');
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('completing an order while stock remains keeps available', () => {
      const petId = petWithStock(2);
      const order = store.placeOrder({ petId });
      store.completeOrder(order.id);
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('an order placed complete that takes the last unit gives sold at once', () => {
      const petId = petWithStock(1);
      const order = store.placeOrder({ petId, complete: true });
      expect(order.complete).toBe(true);
      expect(store.getPet(petId).status).toBe('sold');
    });

    it('an explicit status holds until the next stock or order change', () => {
      const petId = petWithStock(5);
      store.updatePet(petId, { name: 'Rex', categoryId: cats, status: 'sold' });
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 5, status: 'sold' });
      // Without a status, updatePet keeps the current one and does not touch the stock.
      store.updatePet(petId, { name: 'Rex II', categoryId: dogs });
      expect(store.getPet(petId)).toEqual({ id: petId, name: 'Rex II', categoryId: dogs, status: 'sold' });
      store.placeOrder({ petId });
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 4, status: 'available' });
    });

    it('updatePet refuses an unknown category, and an unknown pet first', () => {
      const petId = petWithStock(1);
      expectApiError(() => store.updatePet(petId, { name: 'x', categoryId: 99 }), 400, 'unknown_category');
      expect(store.getPet(petId).name).toBe('pet-1');
      expectApiError(() => store.updatePet(999, { name: 'x', categoryId: 99 }), 404, 'not_found');
    });
  });

  describe('rule 5: completing and cancelling orders', () => {
    it('cancelling an incomplete order returns its stock and derives the status again', () => {
      const petId = petWithStock(2);
      const order = store.placeOrder({ petId, quantity: 2 });
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
      store.deleteOrder(order.id);
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 2, status: 'available' });
      expectApiError(() => store.getOrder(order.id), 404, 'not_found');
    });

    it('cancelling one of two open orders at stock 0 stays pending until stock returns', () => {
      const petId = petWithStock(2);
      const a = store.placeOrder({ petId });
      const b = store.placeOrder({ petId });
      store.completeOrder(a.id);
      expect(store.getPet(petId).status).toBe('pending');
      store.deleteOrder(b.id);
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    });

    it('a complete order cannot be completed again or cancelled (409 order_complete)', () => {
      const petId = petWithStock(1);
      const order = store.placeOrder({ petId });
      store.completeOrder(order.id);
      expectApiError(() => store.completeOrder(order.id), 409, 'order_complete');
      expectApiError(() => store.deleteOrder(order.id), 409, 'order_complete');
      expect(store.getOrder(order.id).complete).toBe(true);
      expect(store.getInventoryItem(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    });

    it('unknown orders are 404', () => {
      expectApiError(() => store.completeOrder(5), 404, 'not_found');
      expectApiError(() => store.deleteOrder(5), 404, 'not_found');
    });
  });

  describe('rule 6: updateInventory', () => {
    it('sets the stock and derives the status again', () => {
      const pet = store.createPet({ name: 'Rex', categoryId: dogs, status: 'pending' });
      expect(store.updateInventory(pet.id, { quantity: 4 })).toEqual({
        petId: pet.id,
        quantity: 4,
        status: 'available',
      });
      expect(store.updateInventory(pet.id, { quantity: 0 }).status).toBe('sold');
      store.updateInventory(pet.id, { quantity: 1 });
      store.placeOrder({ petId: pet.id });
      expect(store.getPet(pet.id).status).toBe('pending');
      expect(store.updateInventory(pet.id, { quantity: 0 }).status).toBe('pending');
      expect(store.updateInventory(pet.id, { quantity: 7 }).status).toBe('available');
      expect(store.getPet(pet.id).status).toBe('available');
    });

    it('refuses a negative stock and an unknown pet', () => {
      const petId = petWithStock(3);
      expectApiError(() => store.updateInventory(petId, { quantity: -1 }), 400, 'bad_request');
      expect(store.getInventoryItem(petId).quantity).toBe(3);
      expectApiError(() => store.updateInventory(999, { quantity: 1 }), 404, 'not_found');
    });
  });

  describe('rule 7: deletePet', () => {
    it('removes the pet and its inventory entry, and keeps its orders', () => {
      const petId = petWithStock(3);
      const done = store.placeOrder({ petId });
      store.completeOrder(done.id);
      const open = store.placeOrder({ petId });
      store.deletePet(petId);
      expectApiError(() => store.getPet(petId), 404, 'not_found');
      expectApiError(() => store.getInventoryItem(petId), 404, 'not_found');
      expectApiError(() => store.updateInventory(petId, { quantity: 1 }), 404, 'not_found');
      expect(store.listInventory({}, ALL)).toEqual([]);
      expect(store.getOrder(done.id).petId).toBe(petId);
      // An open order of a deleted pet can still be cancelled; there is no stock to return it to.
      store.deleteOrder(open.id);
      expectApiError(() => store.getInventoryItem(petId), 404, 'not_found');
      expectApiError(() => store.deletePet(petId), 404, 'not_found');
    });

    it('a deleted pet cannot be ordered', () => {
      const petId = petWithStock(3);
      store.deletePet(petId);
      expectApiError(() => store.placeOrder({ petId }), 400, 'unknown_pet');
    });
  });

  describe('listing', () => {
    beforeEach(() => {
      // ids 1..10: odd ids are dogs, even ids cats; ids 1-3 get stock 0 (sold), 4 gets an open order at stock 0.
      for (let i = 1; i <= 10; i++) petWithStock(i <= 3 ? 0 : 1, i % 2 ? dogs : cats);
      store.placeOrder({ petId: 4 });
    });

    it('pages pets by id with limit and offset', () => {
      const ids = (page: { limit: number; offset: number }) => store.listPets({}, page).map((p) => p.id);
      expect(ids(ALL)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(ids({ limit: 3, offset: 0 })).toEqual([1, 2, 3]);
      expect(ids({ limit: 3, offset: 3 })).toEqual([4, 5, 6]);
      expect(ids({ limit: 3, offset: 9 })).toEqual([10]);
      expect(ids({ limit: 3, offset: 10 })).toEqual([]);
    });

    it('filters pets by status and category, both at once, and pages after filtering', () => {
      const ids = (filter: { status?: PetStatus; categoryId?: number }, page = ALL) =>
        store.listPets(filter, page).map((p) => p.id);
      expect(ids({ status: 'sold' })).toEqual([1, 2, 3]);
      expect(ids({ status: 'pending' })).toEqual([4]);
      expect(ids({ status: 'available' })).toEqual([5, 6, 7, 8, 9, 10]);
      expect(ids({ categoryId: dogs })).toEqual([1, 3, 5, 7, 9]);
      expect(ids({ categoryId: cats, status: 'sold' })).toEqual([2]);
      expect(ids({ categoryId: 999 })).toEqual([]);
      expect(ids({ status: 'available' }, { limit: 2, offset: 1 })).toEqual([6, 7]);
      expect(ids({ categoryId: dogs }, { limit: 2, offset: 2 })).toEqual([5, 7]);
    });

    it('lists inventory with a status filter and pagination', () => {
      const items = store.listInventory({}, { limit: 2, offset: 2 });
      expect(items).toEqual([
        { petId: 3, quantity: 0, status: 'sold' },
        { petId: 4, quantity: 0, status: 'pending' },
      ]);
      expect(store.listInventory({ status: 'sold' }, ALL).map((i) => i.petId)).toEqual([1, 2, 3]);
      expect(store.listInventory({ status: 'available' }, { limit: 2, offset: 4 })).toEqual([
        { petId: 9, quantity: 1, status: 'available' },
        { petId: 10, quantity: 1, status: 'available' },
      ]);
      expect(store.listInventory({}, ALL)).toHaveLength(10);
    });

    it('pages categories and orders', () => {
      expect(store.listCategories({ limit: 1, offset: 1 })).toEqual([
        { id: cats, name: 'Cats', description: 'All cats' },
      ]);
      expect(store.listOrders({ limit: 5, offset: 0 }).map((o) => o.id)).toEqual([1]);
      expect(store.listOrders({ limit: 5, offset: 1 })).toEqual([]);
    });
  });

  it('seed() creates five categories and pets with deep stock', () => {
    const seeded = new PetStore();
    seeded.seed(7);
    expect(seeded.listCategories(ALL)).toHaveLength(5);
    expect(seeded.listPets({}, ALL)).toHaveLength(7);
    for (const item of seeded.listInventory({}, ALL)) expect(item).toMatchObject({ quantity: 100 });
  });

  it('keeps the state rules over random sequences of operations (model check)', () => {
    type Command =
      | { kind: 'create'; status?: PetStatus }
      | { kind: 'order'; pet: number; quantity: number; complete: boolean }
      | { kind: 'complete'; order: number }
      | { kind: 'cancel'; order: number }
      | { kind: 'stock'; pet: number; quantity: number }
      | { kind: 'override'; pet: number; status: PetStatus }
      | { kind: 'delete'; pet: number };
    const status = fc.constantFrom<PetStatus>('available', 'pending', 'sold');
    const pick = fc.nat(12);
    const command: fc.Arbitrary<Command> = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), status: fc.option(status, { nil: undefined }) }),
      fc.record({
        kind: fc.constant('order' as const),
        pet: pick,
        quantity: fc.integer({ min: 1, max: 4 }),
        complete: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('complete' as const), order: pick }),
      fc.record({ kind: fc.constant('cancel' as const), order: pick }),
      fc.record({ kind: fc.constant('stock' as const), pet: pick, quantity: fc.integer({ min: 0, max: 4 }) }),
      fc.record({ kind: fc.constant('override' as const), pet: pick, status }),
      fc.record({ kind: fc.constant('delete' as const), pet: pick }),
    );

    fc.assert(
      fc.property(fc.array(command, { maxLength: 60 }), (commands) => {
        const s = new PetStore();
        const category = s.createCategory({ name: 'c' }).id;
        // The model: stock, incomplete orders and the expected status per live pet.
        const model = new Map<number, { stock: number; open: Set<number>; status: PetStatus }>();
        const orders = new Map<number, { pet: number; quantity: number; complete: boolean }>();
        const derive = (m: { stock: number; open: Set<number> }): PetStatus =>
          m.stock > 0 ? 'available' : m.open.size > 0 ? 'pending' : 'sold';
        const nth = <K>(keys: Iterable<K>, i: number): K | undefined => [...keys][i];

        for (const c of commands) {
          if (c.kind === 'create') {
            const pet = s.createPet({ name: 'p', categoryId: category, status: c.status });
            model.set(pet.id, { stock: 1, open: new Set(), status: c.status ?? 'available' });
          } else if (c.kind === 'order') {
            const id = nth(model.keys(), c.pet) ?? 10_000;
            const m = model.get(id);
            if (!m) {
              expectApiError(() => s.placeOrder({ petId: id }), 400, 'unknown_pet');
            } else if (c.quantity > m.stock) {
              expectApiError(
                () => s.placeOrder({ petId: id, quantity: c.quantity }),
                409,
                'insufficient_stock',
              );
            } else {
              const order = s.placeOrder({ petId: id, quantity: c.quantity, complete: c.complete });
              orders.set(order.id, { pet: id, quantity: c.quantity, complete: c.complete });
              m.stock -= c.quantity;
              if (!c.complete) m.open.add(order.id);
              m.status = derive(m);
            }
          } else if (c.kind === 'complete' || c.kind === 'cancel') {
            const id = nth(orders.keys(), c.order) ?? 10_000;
            const o = orders.get(id);
            const act = () => (c.kind === 'complete' ? s.completeOrder(id) : s.deleteOrder(id));
            if (!o) expectApiError(act, 404, 'not_found');
            else if (o.complete) expectApiError(act, 409, 'order_complete');
            else {
              act();
              const m = model.get(o.pet);
              m?.open.delete(id);
              if (c.kind === 'complete') o.complete = true;
              else {
                orders.delete(id);
                if (m) m.stock += o.quantity;
              }
              if (m) m.status = derive(m);
            }
          } else if (c.kind === 'stock') {
            const id = nth(model.keys(), c.pet) ?? 10_000;
            const m = model.get(id);
            if (!m) expectApiError(() => s.updateInventory(id, { quantity: c.quantity }), 404, 'not_found');
            else {
              s.updateInventory(id, { quantity: c.quantity });
              m.stock = c.quantity;
              m.status = derive(m);
            }
          } else if (c.kind === 'override') {
            const id = nth(model.keys(), c.pet);
            const m = id === undefined ? undefined : model.get(id);
            if (id !== undefined && m) {
              s.updatePet(id, { name: 'q', categoryId: category, status: c.status });
              m.status = c.status;
            }
          } else {
            const id = nth(model.keys(), c.pet);
            if (id !== undefined) {
              s.deletePet(id);
              model.delete(id);
            }
          }

          // Invariants after every command: rule 2 and the model's stock and status.
          const pets = s.listPets({}, ALL);
          expect(pets.map((p) => p.id)).toEqual([...model.keys()]);
          for (const pet of pets) {
            const m = model.get(pet.id)!;
            expect(s.getInventoryItem(pet.id)).toEqual({
              petId: pet.id,
              quantity: m.stock,
              status: pet.status,
            });
            expect(pet.status).toBe(m.status);
          }
          expect(s.listOrders(ALL).map((o) => o.id)).toEqual([...orders.keys()]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('state rules through HTTP', () => {
  const HUGE = { perMinute: 1_000_000, perDay: 100_000_000 };
  let server: RunningServer;
  let categoryId: number;

  const post = (path: string, body?: unknown) => call(server.url, path, { method: 'POST', body });
  const inventory = async (petId: number) => (await call(server.url, `/store/inventory/${petId}`)).body;
  const idOf = (reply: Reply) => (reply.body as { id: number }).id;
  function expectCode(reply: Reply, status: number, code: string): void {
    expect(reply.status, reply.text).toBe(status);
    expect((reply.body as ErrorObject).code).toBe(code);
    expect((reply.body as ErrorObject).status).toBe(status);
  }

  beforeAll(async () => {
    server = await startServer({ plans: applyPlanOverrides(DEFAULT_PLANS, { free: HUGE }), seedData: 0 });
    const category = await post('/categories', { name: 'Dogs' });
    expect(category.status).toBe(201);
    categoryId = idOf(category);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('assigns incremental ids and creates an inventory entry with quantity 1', async () => {
    expect(categoryId).toBe(1);
    const first = await post('/pets', { name: 'A', categoryId });
    const second = await post('/pets', { name: 'B', categoryId, status: 'pending' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect([idOf(first), idOf(second)]).toEqual([1, 2]);
    expect(second.body).toEqual({ id: 2, name: 'B', categoryId, status: 'pending' });
    expect(await inventory(1)).toEqual({ petId: 1, quantity: 1, status: 'available' });
    expect(await inventory(2)).toEqual({ petId: 2, quantity: 1, status: 'pending' });
  });

  it('runs an order through pending and sold', async () => {
    const petId = idOf(await post('/pets', { name: 'C', categoryId }));
    const stock = await call(server.url, `/store/inventory/${petId}`, {
      method: 'PUT',
      body: { quantity: 2 },
    });
    expect(stock.body).toEqual({ petId, quantity: 2, status: 'available' });

    const order = await post('/store/orders', { petId, quantity: 2 });
    expect(order.status).toBe(201);
    expect(order.body).toMatchObject({ petId, quantity: 2, complete: false });
    expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    expect((await call(server.url, `/pets/${petId}`)).body).toMatchObject({ status: 'pending' });
    expectCode(await post('/store/orders', { petId }), 409, 'insufficient_stock');

    const done = await post(`/store/orders/${idOf(order)}/complete`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: idOf(order), complete: true });
    expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'sold' });
    expectCode(await post(`/store/orders/${idOf(order)}/complete`), 409, 'order_complete');
    const cancel = await call(server.url, `/store/orders/${idOf(order)}`, { method: 'DELETE' });
    expectCode(cancel, 409, 'order_complete');

    // Restocking derives the status again.
    await call(server.url, `/store/inventory/${petId}`, { method: 'PUT', body: { quantity: 1 } });
    expect(await inventory(petId)).toEqual({ petId, quantity: 1, status: 'available' });
  });

  it('cancelling an incomplete order returns its stock', async () => {
    const petId = idOf(await post('/pets', { name: 'D', categoryId }));
    const order = await post('/store/orders', { petId });
    expect(await inventory(petId)).toEqual({ petId, quantity: 0, status: 'pending' });
    const cancel = await call(server.url, `/store/orders/${idOf(order)}`, { method: 'DELETE' });
    expect(cancel.status).toBe(204);
    expect(cancel.text).toBe('');
    expect(await inventory(petId)).toEqual({ petId, quantity: 1, status: 'available' });
    expect((await call(server.url, `/store/orders/${idOf(order)}`)).status).toBe(404);
  });

  it('refuses unknown_category and unknown_pet with 400', async () => {
    expectCode(await post('/pets', { name: 'E', categoryId: 999 }), 400, 'unknown_category');
    const put = await call(server.url, '/pets/1', { method: 'PUT', body: { name: 'A', categoryId: 999 } });
    expectCode(put, 400, 'unknown_category');
    expectCode(await post('/store/orders', { petId: 999 }), 400, 'unknown_pet');
  });

  it('deletePet removes the inventory entry', async () => {
    const petId = idOf(await post('/pets', { name: 'F', categoryId }));
    const order = await post('/store/orders', { petId });
    const removed = await call(server.url, `/pets/${petId}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expectCode(await call(server.url, `/store/inventory/${petId}`), 404, 'not_found');
    expectCode(await call(server.url, `/pets/${petId}`), 404, 'not_found');
    // The order stays as history.
    expect((await call(server.url, `/store/orders/${idOf(order)}`)).body).toMatchObject({ petId });
  });

  it('paginates and filters listPets and listInventory', async () => {
    const other = idOf(await post('/categories', { name: 'Cats' }));
    const created: number[] = [];
    for (let i = 0; i < 4; i++) created.push(idOf(await post('/pets', { name: `G${i}`, categoryId: other })));
    const ids = async (path: string) =>
      ((await call(server.url, path)).body as { id: number }[]).map((p) => p.id);
    expect(await ids(`/pets?categoryId=${other}`)).toEqual(created);
    expect(await ids(`/pets?categoryId=${other}&limit=2&offset=1`)).toEqual(created.slice(1, 3));
    expect(await ids(`/pets?categoryId=${other}&status=pending`)).toEqual([]);
    expect(await ids('/pets?categoryId=4242')).toEqual([]);
    const all = await ids('/pets?limit=100');
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(await ids('/pets?limit=2')).toEqual(all.slice(0, 2));
    expect(await ids('/pets?status=pending')).toEqual([2]);

    const entries = async (path: string) => (await call(server.url, path)).body as { petId: number }[];
    expect((await entries('/store/inventory?status=pending')).map((e) => e.petId)).toEqual([2]);
    const page = await entries('/store/inventory?limit=3&offset=1');
    expect(page.map((e) => e.petId)).toEqual(all.slice(1, 4));
    // The default page is 20 items.
    for (let i = 0; i < 20; i++) await post('/pets', { name: `H${i}`, categoryId });
    expect(await entries('/store/inventory')).toHaveLength(20);
    expect(await ids('/pets')).toHaveLength(20);
  });
});
