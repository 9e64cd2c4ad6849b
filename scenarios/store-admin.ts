import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/** The back office: categories, pets and stock being created, changed and removed. */
export default defineScenario<Catalogue>({
  name: 'store-admin',
  description: 'Store administration: categories, pets and inventory',
  plan: 'business',
  workload: { executor: 'constant-vus', vus: 3, duration: '15s', thinkTime: ['50ms', '150ms'] },
  setup: (api) => prepareCatalogue(api, 2),
  flows: [
    { ...flows.manageCatalogue, weight: 4 },
    { ...flows.listCategories, weight: 1 },
    { ...flows.checkStock, weight: 2 },
  ],
  teardown: removeCatalogue,
});
