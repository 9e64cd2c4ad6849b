// The seed's resources as TypeScript types, shared by the reference server and the typed client:
// from src/api/petstore.types.ts, which `npm run types:petstore` generates from our document, so that
// the two never say different things. Interfaces, so that a signature names them (`createPet(body:
// NewPet)`); an error about a field lists the schema's fields. Where the reference server promises
// more than the document requires, that is said here.
import type { components, operations } from './petstore.types.ts';

type Schemas = components['schemas'];
// An interface extends a name: one per schema it is made from.
type NewPetSchema = Schemas['NewPet'];
type PetSchema = Schemas['Pet'];
type NewCategorySchema = Schemas['NewCategory'];
type CategorySchema = Schemas['Category'];
type OrderSchema = Schemas['Order'];
type NewOrderSchema = Schemas['NewOrder'];
type InventoryItemSchema = Schemas['InventoryItem'];
type PageQuery = NonNullable<operations['listCategories']['parameters']['query']>;

export type PetStatus = Schemas['PetStatus'];

export interface NewPet extends NewPetSchema {}

/** The document requires what NewPet does and `id`: the server always sends `status` too. */
export interface Pet extends Required<PetSchema> {}

export interface NewCategory extends NewCategorySchema {}

export interface Category extends CategorySchema {}

/** The document requires no field of an Order (the seed's); the server always sends all of them. */
export interface Order extends Required<OrderSchema> {}

/**
 * The document's NewOrder is an Order (less `id`, which the server assigns) with `petId` required,
 * which its `allOf` says in a member of its own that openapi-typescript does not carry over.
 */
export interface NewOrder extends Omit<NewOrderSchema, 'id' | 'petId'> {
  petId: number;
}

export interface InventoryItem extends InventoryItemSchema {}

/** Paging, as every list operation takes it. */
export interface Page extends PageQuery {}
