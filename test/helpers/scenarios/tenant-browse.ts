import { defineScenario } from '../../../src/scenario/define.ts';

/** A small tenant mix with no setup: spread over worker threads by its keys (test/scenario/workers). */
export default defineScenario({
  name: 'tenant-browse',
  workload: { executor: 'constant-arrival-rate', rate: '50%', duration: '3s', maxInFlight: 2 },
  tenants: [
    { plan: 'free', keys: 6 },
    { plan: 'pro', keys: 3, rate: '10%' },
  ],
  flows: [{ name: 'categories', run: async (api) => void (await api.listCategories({ limit: 5 })) }],
});
