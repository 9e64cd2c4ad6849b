/** The seed's resources as TypeScript types, shared by the reference server and the typed client. */
export type PetStatus = 'available' | 'pending' | 'sold';

export interface NewPet {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

export interface Pet extends NewPet {
  id: number;
  status: PetStatus;
}

export interface NewCategory {
  name: string;
  description?: string;
}

export interface Category extends NewCategory {
  id: number;
}

export interface Order {
  id: number;
  petId: number;
  quantity: number;
  shipDate: string;
  complete: boolean;
}

export interface NewOrder {
  petId: number;
  quantity?: number;
  shipDate?: string;
  complete?: boolean;
}

export interface InventoryItem {
  petId: number;
  quantity: number;
  status: PetStatus;
}

export interface Page {
  limit?: number;
  offset?: number;
}
