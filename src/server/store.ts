import type { Category, InventoryItem, Order, Pet, PetStatus } from '../api/models.ts';
import { ApiError, notFound } from './api-error.ts';

export type { Category, InventoryItem, Order, Pet, PetStatus } from '../api/models.ts';

export interface Page {
  limit: number;
  offset: number;
}

const SHIP_DELAY_MS = 86_400_000;
const SEED_CATEGORIES = ['Dogs', 'Cats', 'Birds', 'Fish', 'Reptiles'];
const SEED_NAMES = ['Rex', 'Bella', 'Milo', 'Luna', 'Coco', 'Max', 'Kiwi', 'Nemo', 'Ziggy', 'Pip'];
/** Seeded pets get a deep stock so that a load test's orders do not run them out at once. */
export const SEED_STOCK = 100;

function* paginate<T>(items: Iterable<T>, page: Page, keep: (item: T) => boolean = () => true): Generator<T> {
  let skipped = 0;
  let taken = 0;
  if (page.limit <= 0) return;
  for (const item of items) {
    if (!keep(item)) continue;
    if (skipped < page.offset) {
      skipped++;
      continue;
    }
    yield item;
    if (++taken >= page.limit) return;
  }
}

/**
 * The in-memory pet store and its state rules (the seed leaves transitions open; these are our
 * documented choice, also written in the OpenAPI document):
 * 1. a new pet gets an inventory entry with quantity 1 and the pet's status;
 * 2. a pet and its inventory entry always share one status;
 * 3. placing an order reserves stock, 409 insufficient_stock when there is not enough;
 * 4. after any stock or order change the status is derived: stock > 0 -> available; stock 0 with an
 *    incomplete order -> pending; stock 0 and every order complete -> sold;
 * 5. completing an order fulfils it; deleting an incomplete order cancels it and returns its stock.
 * Maps keep insertion order, which is id order, so pages are stable.
 */
export class PetStore {
  private readonly pets = new Map<number, Pet>();
  private readonly categories = new Map<number, Category>();
  private readonly orders = new Map<number, Order>();
  private readonly stock = new Map<number, number>();
  /** Incomplete orders per pet, so deriving a status never scans all orders. */
  private readonly openOrders = new Map<number, number>();
  private nextId = { pet: 1, category: 1, order: 1 };
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  seed(pets: number): void {
    if (pets <= 0) return;
    const categoryIds = SEED_CATEGORIES.map(
      (name) => this.createCategory({ name, description: `All ${name.toLowerCase()}` }).id,
    );
    for (let i = 0; i < pets; i++) {
      const pet = this.createPet({
        name: `${SEED_NAMES[i % SEED_NAMES.length]} ${i + 1}`,
        categoryId: categoryIds[i % categoryIds.length] as number,
      });
      this.updateInventory(pet.id, { quantity: SEED_STOCK });
    }
  }

  // Pets

  listPets(filter: { status?: PetStatus; categoryId?: number }, page: Page): Pet[] {
    const keep = (p: Pet) =>
      (filter.status === undefined || p.status === filter.status) &&
      (filter.categoryId === undefined || p.categoryId === filter.categoryId);
    return [...paginate(this.pets.values(), page, keep)];
  }

  createPet(input: { name: string; categoryId: number; status?: PetStatus }): Pet {
    this.requireCategory(input.categoryId);
    const pet: Pet = {
      id: this.nextId.pet++,
      name: input.name,
      categoryId: input.categoryId,
      status: input.status ?? 'available',
    };
    this.pets.set(pet.id, pet);
    this.stock.set(pet.id, 1);
    return pet;
  }

  getPet(id: number): Pet {
    const pet = this.pets.get(id);
    if (!pet) throw notFound('pet', id);
    return pet;
  }

  updatePet(id: number, input: { name: string; categoryId: number; status?: PetStatus }): Pet {
    const pet = this.getPet(id);
    this.requireCategory(input.categoryId);
    pet.name = input.name;
    pet.categoryId = input.categoryId;
    // An explicit status is an admin override; without one the pet keeps its status.
    if (input.status !== undefined) pet.status = input.status;
    return pet;
  }

  deletePet(id: number): void {
    this.getPet(id);
    this.pets.delete(id);
    this.stock.delete(id);
  }

  // Categories

  listCategories(page: Page): Category[] {
    return [...paginate(this.categories.values(), page)];
  }

  createCategory(input: { name: string; description?: string }): Category {
    const category: Category = { id: this.nextId.category++, name: input.name };
    if (input.description !== undefined) category.description = input.description;
    this.categories.set(category.id, category);
    return category;
  }

  getCategory(id: number): Category {
    const category = this.categories.get(id);
    if (!category) throw notFound('category', id);
    return category;
  }

  // Orders

  listOrders(page: Page): Order[] {
    return [...paginate(this.orders.values(), page)];
  }

  placeOrder(input: { petId: number; quantity?: number; shipDate?: string; complete?: boolean }): Order {
    const pet = this.pets.get(input.petId);
    if (!pet) throw new ApiError(400, 'unknown_pet', `petId ${input.petId} names no pet`);
    const quantity = input.quantity ?? 1;
    if (quantity < 1) throw new ApiError(400, 'bad_request', 'quantity must be at least 1');
    const inStock = this.stock.get(pet.id) ?? 0;
    if (quantity > inStock) {
      throw new ApiError(
        409,
        'insufficient_stock',
        `pet ${pet.id} has ${inStock} in stock, ${quantity} ordered`,
      );
    }
    const order: Order = {
      id: this.nextId.order++,
      petId: pet.id,
      quantity,
      shipDate: input.shipDate ?? new Date(this.now() + SHIP_DELAY_MS).toISOString(),
      complete: input.complete ?? false,
    };
    this.orders.set(order.id, order);
    this.stock.set(pet.id, inStock - quantity);
    if (!order.complete) this.openOrders.set(pet.id, (this.openOrders.get(pet.id) ?? 0) + 1);
    this.rederive(pet.id);
    return order;
  }

  getOrder(id: number): Order {
    const order = this.orders.get(id);
    if (!order) throw notFound('order', id);
    return order;
  }

  completeOrder(id: number): Order {
    const order = this.getOrder(id);
    if (order.complete) throw new ApiError(409, 'order_complete', `order ${id} is already complete`);
    order.complete = true;
    this.closeOrder(order.petId);
    this.rederive(order.petId);
    return order;
  }

  deleteOrder(id: number): void {
    const order = this.getOrder(id);
    if (order.complete)
      throw new ApiError(409, 'order_complete', `order ${id} is complete and cannot be cancelled`);
    this.orders.delete(id);
    this.closeOrder(order.petId);
    if (this.pets.has(order.petId)) {
      this.stock.set(order.petId, (this.stock.get(order.petId) ?? 0) + order.quantity);
      this.rederive(order.petId);
    }
  }

  // Inventory

  listInventory(filter: { status?: PetStatus }, page: Page): InventoryItem[] {
    const keep = (p: Pet) => filter.status === undefined || p.status === filter.status;
    return [...paginate(this.pets.values(), page, keep)].map((p) => this.inventoryOf(p));
  }

  getInventoryItem(petId: number): InventoryItem {
    return this.inventoryOf(this.getPet(petId));
  }

  updateInventory(petId: number, input: { quantity: number }): InventoryItem {
    const pet = this.getPet(petId);
    if (input.quantity < 0) throw new ApiError(400, 'bad_request', 'quantity must be at least 0');
    this.stock.set(petId, input.quantity);
    this.rederive(petId);
    return this.inventoryOf(pet);
  }

  private inventoryOf(pet: Pet): InventoryItem {
    return { petId: pet.id, quantity: this.stock.get(pet.id) ?? 0, status: pet.status };
  }

  private requireCategory(id: number): void {
    if (!this.categories.has(id))
      throw new ApiError(400, 'unknown_category', `categoryId ${id} names no category`);
  }

  private closeOrder(petId: number): void {
    const open = (this.openOrders.get(petId) ?? 1) - 1;
    if (open > 0) this.openOrders.set(petId, open);
    else this.openOrders.delete(petId);
  }

  private derivedStatus(petId: number): PetStatus {
    if ((this.stock.get(petId) ?? 0) > 0) return 'available';
    return this.openOrders.has(petId) ? 'pending' : 'sold';
  }

  private rederive(petId: number): void {
    const pet = this.pets.get(petId);
    if (pet) pet.status = this.derivedStatus(petId);
  }
}
