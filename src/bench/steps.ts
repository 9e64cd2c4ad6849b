import type { Api } from '../client/petstore-api.ts';
import { SETUP_STOCK } from '../scenario/catalogue.ts';

/** The ids one request of the cycle uses: a pet, a category and an order of the prepared catalogue. */
export interface StepIds {
  petId: number;
  categoryId: number;
  /** Set when the mix has getOrder: setup then places one order. */
  orderId: number | undefined;
}

/** A resource a request creates for the next request of its connection, which uses it up. */
export type Resource = 'pet' | 'order';

export interface Step {
  /** The request, made through the typed API with the catalogue's ids (captured, not sent). */
  call(api: Api, ids: StepIds): unknown;
  /**
   * Sent on a resource created just before it on the same connection (deleting a pet, completing
   * or cancelling an order can be done once per resource): the cycle puts the creating operation
   * before it, and its path is filled with the created id at send time.
   */
  consumes?: Resource;
}

/** The operation that creates each resource, and the path parameter that names it. */
export const CREATES: Readonly<Record<Resource, { operationId: string; param: string }>> = {
  pet: { operationId: 'createPet', param: 'petId' },
  order: { operationId: 'placeOrder', param: 'orderId' },
};

/** A placeholder id: a consumer's path is filled with the created resource's id when it is sent. */
const CREATED = 0;

/**
 * What each operation of the table sends in a benchmark, with the parameters and bodies the scenario
 * flows use (scenarios/lib/flows.ts): the first page of available pets, an order of one, a pet renamed
 * within its category, stock set back to what setup gave (so orders never run a pet out).
 */
export const STEPS: Readonly<Record<string, Step>> = {
  listPets: { call: (api) => api.listPets({ status: 'available', limit: 20 }) },
  createPet: {
    call: (api, ids) => api.createPet({ name: 'load-test pet (bench)', categoryId: ids.categoryId }),
  },
  getPetById: { call: (api, ids) => api.getPetById(ids.petId) },
  updatePet: {
    call: (api, ids) =>
      api.updatePet(ids.petId, {
        name: `load-test pet ${ids.petId} (renamed)`,
        categoryId: ids.categoryId,
        status: 'available',
      }),
  },
  deletePet: { consumes: 'pet', call: (api) => api.deletePet(CREATED) },
  listCategories: { call: (api) => api.listCategories({ limit: 50 }) },
  createCategory: {
    call: (api) =>
      api.createCategory({ name: 'load-test category', description: 'Created by petstore-load bench' }),
  },
  getCategory: { call: (api, ids) => api.getCategory(ids.categoryId) },
  listOrders: { call: (api) => api.listOrders({ limit: 20 }) },
  placeOrder: { call: (api, ids) => api.placeOrder({ petId: ids.petId, quantity: 1 }) },
  getOrder: { call: (api, ids) => api.getOrder(ids.orderId ?? CREATED) },
  deleteOrder: { consumes: 'order', call: (api) => api.deleteOrder(CREATED) },
  completeOrder: { consumes: 'order', call: (api) => api.completeOrder(CREATED) },
  listInventory: { call: (api) => api.listInventory({ status: 'available', limit: 20 }) },
  getInventoryItem: { call: (api, ids) => api.getInventoryItem(ids.petId) },
  updateInventory: { call: (api, ids) => api.updateInventory(ids.petId, { quantity: SETUP_STOCK }) },
};
