import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/**
 * A service's customers on three plans, 100 keys each paced by its own plan, and halfway through an
 * abusive customer: five Free keys in raw mode at three times their quota. The result's `byPlan`
 * shows the tiers side by side; `byTenantGroup` keeps the abusive group's 429s apart; `isolation`
 * says whether the compliant tenants' latency or 429s changed when the abusive group started.
 */
export default defineScenario<Catalogue>({
  name: 'tenant-mix',
  description:
    '100 tenants on Free, Pro and Business beside an abusive Free group from 10 s: the isolation verdict',
  plan: 'free',
  workload: { executor: 'constant-arrival-rate', rate: '10%', duration: '20s', maxInFlight: 4 },
  tenants: [
    { plan: 'free', keys: 60, rate: '20%' },
    { plan: 'pro', keys: 30, rate: '10%' },
    { plan: 'business', keys: 10, rate: '2%' },
    { plan: 'free', keys: 5, enforce: false, name: 'abusive', rate: '300%', startTime: '10s' },
  ],
  setup: (api) => prepareCatalogue(api, 3),
  flows: [
    { ...flows.browsePets, weight: 4 },
    { ...flows.viewPet, weight: 3 },
    { ...flows.listCategories, weight: 2 },
    { ...flows.checkStock, weight: 1 },
  ],
  teardown: removeCatalogue,
  thresholds: ['plan:free:rate_limited==0', 'plan:pro:rate_limited==0', 'plan:business:rate_limited==0'],
});
