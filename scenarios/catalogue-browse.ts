import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/** Read-only browsing at a constant arrival rate of 80% of the plan: the open model's latency view. */
export default defineScenario<Catalogue>({
  name: 'catalogue-browse',
  description: 'Browsing pets and categories at a constant arrival rate (80% of the plan)',
  plan: 'free',
  workload: { executor: 'constant-arrival-rate', rate: '80%', duration: '20s', maxInFlight: 20 },
  setup: (api) => prepareCatalogue(api, 3),
  flows: [
    { ...flows.browsePets, weight: 5 },
    { ...flows.browseByCategory, weight: 2 },
    { ...flows.listCategories, weight: 1 },
  ],
  teardown: removeCatalogue,
});
