import type { Flow } from 'petstore-load';
import type { Catalogue } from './catalogue.ts';

const STATUSES = ['available', 'pending', 'sold'] as const;

/** The flows the scenarios mix, each a small piece of what a real client does. */
export const browsePets: Flow<Catalogue> = {
  name: 'browse-pets',
  run: async (api, ctx) => {
    const status = ctx.random() < 0.7 ? 'available' : ctx.pick(STATUSES);
    await api.listPets({ status, limit: 20, offset: Math.floor(ctx.random() * 3) * 20 });
  },
};

export const browseByCategory: Flow<Catalogue> = {
  name: 'browse-by-category',
  run: async (api, ctx) => {
    const categoryId = ctx.pick(ctx.data.categoryIds);
    await api.getCategory(categoryId);
    await api.listPets({ categoryId, limit: 10 });
  },
};

export const listCategories: Flow<Catalogue> = {
  name: 'list-categories',
  run: async (api) => {
    await api.listCategories({ limit: 50 });
  },
};

export const viewPet: Flow<Catalogue> = {
  name: 'view-pet',
  run: async (api, ctx) => {
    await api.getPetById(ctx.pick(ctx.data.petIds));
  },
};

export const checkStock: Flow<Catalogue> = {
  name: 'check-stock',
  run: async (api, ctx) => {
    if (ctx.random() < 0.5) await api.listInventory({ status: 'available', limit: 20 });
    else await api.getInventoryItem(ctx.pick(ctx.data.petIds));
  },
};

export const checkout: Flow<Catalogue> = {
  name: 'checkout',
  run: async (api, ctx) => {
    const order = await api.placeOrder({ petId: ctx.pick(ctx.data.petIds), quantity: 1 });
    if (!order.ok) return;
    await api.getOrder(order.body.id);
    // Most orders are fulfilled, some are cancelled (which returns the stock).
    if (ctx.random() < 0.75) await api.completeOrder(order.body.id);
    else await api.deleteOrder(order.body.id);
  },
};

export const reviewOrders: Flow<Catalogue> = {
  name: 'review-orders',
  run: async (api, ctx) => {
    await api.listOrders({ limit: 20, offset: Math.floor(ctx.random() * 2) * 20 });
  },
};

export const manageCatalogue: Flow<Catalogue> = {
  name: 'manage-catalogue',
  run: async (api, ctx) => {
    const categoryId =
      ctx.random() < 0.2
        ? (await api.createCategory({ name: `category ${ctx.iteration}` })).body.id
        : ctx.pick(ctx.data.categoryIds);
    const pet = await api.createPet({ name: `pet ${ctx.iteration}`, categoryId });
    if (!pet.ok) return;
    await api.updatePet(pet.body.id, {
      name: `pet ${ctx.iteration} (renamed)`,
      categoryId,
      status: 'available',
    });
    await api.updateInventory(pet.body.id, { quantity: 1 + Math.floor(ctx.random() * 10) });
    await api.deletePet(pet.body.id);
  },
};
