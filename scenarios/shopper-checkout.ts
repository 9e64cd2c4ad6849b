import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/** Shoppers ramping up and down: look at a pet, check its stock, order, then fulfil or cancel. */
export default defineScenario<Catalogue>({
  name: 'shopper-checkout',
  description: 'Shoppers browsing, checking stock and placing, completing or cancelling orders',
  plan: 'pro',
  workload: {
    executor: 'ramping-vus',
    startVUs: 1,
    stages: [
      { target: 6, duration: '8s' },
      { target: 6, duration: '8s' },
      { target: 0, duration: '4s' },
    ],
    thinkTime: ['20ms', '200ms'],
  },
  setup: (api) => prepareCatalogue(api, 5),
  flows: [
    { ...flows.viewPet, weight: 3 },
    { ...flows.checkStock, weight: 2 },
    { ...flows.checkout, weight: 4 },
    { ...flows.reviewOrders, weight: 1 },
  ],
  teardown: removeCatalogue,
});
