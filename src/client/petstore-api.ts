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
import type { ApiResponse, CallInput } from './client.ts';

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

export function petstoreApi(call: CallFn): Api {
  return {
    call,
    listPets: (query) => call('listPets', { query }),
    createPet: (body) => call('createPet', { body }),
    getPetById: (petId) => call('getPetById', { path: { petId } }),
    updatePet: (petId, body) => call('updatePet', { path: { petId }, body }),
    deletePet: (petId) => call('deletePet', { path: { petId } }),
    listCategories: (query) => call('listCategories', { query }),
    createCategory: (body) => call('createCategory', { body }),
    getCategory: (categoryId) => call('getCategory', { path: { categoryId } }),
    listOrders: (query) => call('listOrders', { query }),
    placeOrder: (body) => call('placeOrder', { body }),
    getOrder: (orderId) => call('getOrder', { path: { orderId } }),
    deleteOrder: (orderId) => call('deleteOrder', { path: { orderId } }),
    completeOrder: (orderId) => call('completeOrder', { path: { orderId } }),
    listInventory: (query) => call('listInventory', { query }),
    getInventoryItem: (petId) => call('getInventoryItem', { path: { petId } }),
    updateInventory: (petId, body) => call('updateInventory', { path: { petId }, body }),
  };
}
