import type { Page, PetStatus, PetStore } from './store.ts';

export interface HandlerInput {
  params: Record<string, number>;
  query: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: bodies are validated against the document before they get here
  body: any;
}

/** Status and body; `undefined` body means none (204). */
export type HandlerResult = [status: number, body?: unknown];
export type Handler = (store: PetStore, input: HandlerInput) => HandlerResult;

const page = (q: Record<string, unknown>): Page => ({
  limit: (q.limit as number | undefined) ?? 20,
  offset: (q.offset as number | undefined) ?? 0,
});

/**
 * One handler per operationId of the document. The server refuses to start if the document has an
 * operation without a handler here, so the two cannot drift apart silently.
 */
export const HANDLERS: Readonly<Record<string, Handler>> = {
  listPets: (s, { query }) => [
    200,
    s.listPets(
      { status: query.status as PetStatus | undefined, categoryId: query.categoryId as number | undefined },
      page(query),
    ),
  ],
  createPet: (s, { body }) => [201, s.createPet(body)],
  getPetById: (s, { params }) => [200, s.getPet(params.petId as number)],
  updatePet: (s, { params, body }) => [200, s.updatePet(params.petId as number, body)],
  deletePet: (s, { params }) => {
    s.deletePet(params.petId as number);
    return [204];
  },
  listCategories: (s, { query }) => [200, s.listCategories(page(query))],
  createCategory: (s, { body }) => [201, s.createCategory(body)],
  getCategory: (s, { params }) => [200, s.getCategory(params.categoryId as number)],
  listOrders: (s, { query }) => [200, s.listOrders(page(query))],
  placeOrder: (s, { body }) => [201, s.placeOrder(body)],
  getOrder: (s, { params }) => [200, s.getOrder(params.orderId as number)],
  deleteOrder: (s, { params }) => {
    s.deleteOrder(params.orderId as number);
    return [204];
  },
  completeOrder: (s, { params }) => [200, s.completeOrder(params.orderId as number)],
  listInventory: (s, { query }) => [
    200,
    s.listInventory({ status: query.status as PetStatus | undefined }, page(query)),
  ],
  getInventoryItem: (s, { params }) => [200, s.getInventoryItem(params.petId as number)],
  updateInventory: (s, { params, body }) => [200, s.updateInventory(params.petId as number, body)],
};
