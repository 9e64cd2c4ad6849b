import type { ApiResponse, CallInput } from '../api/call-types.ts';
import type {
  Category,
  InventoryItem,
  NewCategory,
  NewOrder,
  NewPet,
  Order,
  Page,
  Pet,
  PetStatus,
} from '../api/models.ts';

export type CallFn = <T = unknown>(operationId: string, input?: CallInput) => Promise<ApiResponse<T>>;

/**
 * What a scenario flow gets: a typed method per operation of our document, and `call` for any
 * operation of any document (`--spec`). Responses are returned, never thrown: a flow decides what a
 * 404 means to it, and the recorder has counted it either way.
 */
export interface Api {
  call: CallFn;
  listPets(query?: { status?: PetStatus; categoryId?: number } & Page): Promise<ApiResponse<Pet[]>>;
  createPet(body: NewPet): Promise<ApiResponse<Pet>>;
  /** Deprecated by the service (Deprecation and Sunset headers); kept so traffic can exercise it. */
  getPetById(petId: number): Promise<ApiResponse<Pet>>;
  updatePet(petId: number, body: NewPet): Promise<ApiResponse<Pet>>;
  deletePet(petId: number): Promise<ApiResponse<undefined>>;
  listCategories(query?: Page): Promise<ApiResponse<Category[]>>;
  createCategory(body: NewCategory): Promise<ApiResponse<Category>>;
  getCategory(categoryId: number): Promise<ApiResponse<Category>>;
  listOrders(query?: Page): Promise<ApiResponse<Order[]>>;
  placeOrder(body: NewOrder): Promise<ApiResponse<Order>>;
  getOrder(orderId: number): Promise<ApiResponse<Order>>;
  deleteOrder(orderId: number): Promise<ApiResponse<undefined>>;
  completeOrder(orderId: number): Promise<ApiResponse<Order>>;
  listInventory(query?: { status?: PetStatus } & Page): Promise<ApiResponse<InventoryItem[]>>;
  getInventoryItem(petId: number): Promise<ApiResponse<InventoryItem>>;
  updateInventory(petId: number, body: { quantity: number }): Promise<ApiResponse<InventoryItem>>;
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
  listPets(query?: { status?: PetStatus; categoryId?: number } & Page) {
    return this.call<Pet[]>('listPets', { query });
  }
  createPet(body: NewPet) {
    return this.call<Pet>('createPet', { body });
  }
  getPetById(petId: number) {
    return this.call<Pet>('getPetById', { path: { petId } });
  }
  updatePet(petId: number, body: NewPet) {
    return this.call<Pet>('updatePet', { path: { petId }, body });
  }
  deletePet(petId: number) {
    return this.call<undefined>('deletePet', { path: { petId } });
  }
  listCategories(query?: Page) {
    return this.call<Category[]>('listCategories', { query });
  }
  createCategory(body: NewCategory) {
    return this.call<Category>('createCategory', { body });
  }
  getCategory(categoryId: number) {
    return this.call<Category>('getCategory', { path: { categoryId } });
  }
  listOrders(query?: Page) {
    return this.call<Order[]>('listOrders', { query });
  }
  placeOrder(body: NewOrder) {
    return this.call<Order>('placeOrder', { body });
  }
  getOrder(orderId: number) {
    return this.call<Order>('getOrder', { path: { orderId } });
  }
  deleteOrder(orderId: number) {
    return this.call<undefined>('deleteOrder', { path: { orderId } });
  }
  completeOrder(orderId: number) {
    return this.call<Order>('completeOrder', { path: { orderId } });
  }
  listInventory(query?: { status?: PetStatus } & Page) {
    return this.call<InventoryItem[]>('listInventory', { query });
  }
  getInventoryItem(petId: number) {
    return this.call<InventoryItem>('getInventoryItem', { path: { petId } });
  }
  updateInventory(petId: number, body: { quantity: number }) {
    return this.call<InventoryItem>('updateInventory', { path: { petId }, body });
  }
}

export function petstoreApi(call: CallFn): Api {
  return new PetstoreApi(call);
}
