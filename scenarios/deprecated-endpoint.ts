import { defineScenario } from 'petstore-load';
import { type Catalogue, prepareCatalogue, removeCatalogue } from './lib/catalogue.ts';
import * as flows from './lib/flows.ts';

/**
 * Traffic on the deprecated getPetById, to see its Deprecation and Sunset headers checked on every
 * response (and, after the sunset, its 410s) before clients are moved off it.
 */
export default defineScenario<Catalogue>({
  name: 'deprecated-endpoint',
  description: 'Calls the deprecated getPetById and checks its Deprecation, Sunset and Link headers',
  plan: 'free',
  workload: { executor: 'constant-arrival-rate', rate: '50%', duration: '15s' },
  setup: (api) => prepareCatalogue(api, 3),
  flows: [{ ...flows.viewPet, weight: 1 }],
  teardown: removeCatalogue,
});
