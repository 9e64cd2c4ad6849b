import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/**
 * The default: a browse-heavy mix of every operation, by more virtual users than the plan admits, so
 * that pacing holds the traffic at the plan's quota (watch the pacing wait and the utilisation).
 */
export default defineScenario<Catalogue>({
  name: 'mixed-traffic',
  description: 'A realistic, browse-heavy mix of all pet store operations at the plan quota',
  plan: 'free',
  workload: { executor: 'constant-vus', vus: 8, duration: '20s', thinkTime: ['0ms', '50ms'] },
  setup: (api) => prepareCatalogue(api, 5),
  flows: [
    { ...flows.browsePets, weight: 30 },
    { ...flows.browseByCategory, weight: 12 },
    { ...flows.listCategories, weight: 8 },
    { ...flows.viewPet, weight: 12 },
    { ...flows.checkStock, weight: 10 },
    { ...flows.checkout, weight: 12 },
    { ...flows.reviewOrders, weight: 8 },
    { ...flows.manageCatalogue, weight: 8 },
  ],
  teardown: removeCatalogue,
});
