import type { ApiResponse, CallInput } from '../api/call-types.ts';
import type { Category, InventoryItem, NewCategory, NewOrder, NewPet, Order, Pet } from '../api/models.ts';
import type { components, operations } from '../api/petstore.types.ts';

/** An operation's query, as our document (src/api/petstore.types.ts) declares it. */
type Query<Id extends keyof operations> = NonNullable<operations[Id]['parameters']['query']>;
type InventoryUpdate = components['schemas']['InventoryUpdate'];
/** Each method's operation id, checked against the document's. */
type OperationId = keyof operations;

export type CallFn = <T = unknown>(operationId: string, input?: CallInput) => Promise<ApiResponse<T>>;

/**
 * What a scenario flow gets: a typed method per operation of our document, and `call` for any
 * operation of any document (`--spec`). Responses are returned, never thrown: a flow decides what a
 * 404 means to it, and the recorder has counted it either way.
 */
export interface Api {
  call: CallFn;
  listPets(query?: Query<'listPets'>): Promise<ApiResponse<Pet[]>>;
  createPet(body: NewPet): Promise<ApiResponse<Pet>>;
  /** Deprecated by the service (Deprecation and Sunset headers); kept so traffic can exercise it. */
  getPetById(petId: number): Promise<ApiResponse<Pet>>;
  updatePet(petId: number, body: NewPet): Promise<ApiResponse<Pet>>;
  deletePet(petId: number): Promise<ApiResponse<undefined>>;
  listCategories(query?: Query<'listCategories'>): Promise<ApiResponse<Category[]>>;
  createCategory(body: NewCategory): Promise<ApiResponse<Category>>;
  getCategory(categoryId: number): Promise<ApiResponse<Category>>;
  listOrders(query?: Query<'listOrders'>): Promise<ApiResponse<Order[]>>;
  placeOrder(body: NewOrder): Promise<ApiResponse<Order>>;
  getOrder(orderId: number): Promise<ApiResponse<Order>>;
  deleteOrder(orderId: number): Promise<ApiResponse<undefined>>;
  completeOrder(orderId: number): Promise<ApiResponse<Order>>;
  listInventory(query?: Query<'listInventory'>): Promise<ApiResponse<InventoryItem[]>>;
  getInventoryItem(petId: number): Promise<ApiResponse<InventoryItem>>;
  updateInventory(petId: number, body: InventoryUpdate): Promise<ApiResponse<InventoryItem>>;
}

/**
 * Methods live on the prototype: the engine makes one per iteration, and a literal of sixteen
 * closures per iteration is measurable on the generator's hot path. (So call them as methods,
 * `api.listPets()`, rather than pulling them off the object.)
 */
export class PetstoreApi implements Api {
  private readonly caller: CallFn;

  constructor(caller: CallFn) {
    this.caller = caller;
  }
  /** Subclasses change how calls are made (the engine marks an iteration's first call with its due time). */
  call<T = unknown>(operationId: string, input?: CallInput): Promise<ApiResponse<T>> {
    return this.caller<T>(operationId, input);
  }
  listPets(query?: Query<'listPets'>) {
    return this.call<Pet[]>('listPets' satisfies OperationId, { query });
  }
  createPet(body: NewPet) {
    return this.call<Pet>('createPet' satisfies OperationId, { body });
  }
  getPetById(petId: number) {
    return this.call<Pet>('getPetById' satisfies OperationId, { path: { petId } });
  }
  updatePet(petId: number, body: NewPet) {
    return this.call<Pet>('updatePet' satisfies OperationId, { path: { petId }, body });
  }
  deletePet(petId: number) {
    return this.call<undefined>('deletePet' satisfies OperationId, { path: { petId } });
  }
  listCategories(query?: Query<'listCategories'>) {
    return this.call<Category[]>('listCategories' satisfies OperationId, { query });
  }
  createCategory(body: NewCategory) {
    return this.call<Category>('createCategory' satisfies OperationId, { body });
  }
  getCategory(categoryId: number) {
    return this.call<Category>('getCategory' satisfies OperationId, { path: { categoryId } });
  }
  listOrders(query?: Query<'listOrders'>) {
    return this.call<Order[]>('listOrders' satisfies OperationId, { query });
  }
  placeOrder(body: NewOrder) {
    return this.call<Order>('placeOrder' satisfies OperationId, { body });
  }
  getOrder(orderId: number) {
    return this.call<Order>('getOrder' satisfies OperationId, { path: { orderId } });
  }
  deleteOrder(orderId: number) {
    return this.call<undefined>('deleteOrder' satisfies OperationId, { path: { orderId } });
  }
  completeOrder(orderId: number) {
    return this.call<Order>('completeOrder' satisfies OperationId, { path: { orderId } });
  }
  listInventory(query?: Query<'listInventory'>) {
    return this.call<InventoryItem[]>('listInventory' satisfies OperationId, { query });
  }
  getInventoryItem(petId: number) {
    return this.call<InventoryItem>('getInventoryItem' satisfies OperationId, { path: { petId } });
  }
  updateInventory(petId: number, body: InventoryUpdate) {
    return this.call<InventoryItem>('updateInventory' satisfies OperationId, { path: { petId }, body });
  }
}

export function petstoreApi(call: CallFn): Api {
  return new PetstoreApi(call);
}
