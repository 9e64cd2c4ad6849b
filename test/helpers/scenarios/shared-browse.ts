import { defineScenario } from '../../../src/scenario/define.ts';

/**
 * Reads only, no setup or teardown: every request of the key is the workload's, so that the
 * utilisation of a quota shared by several generators is the workload's alone.
 */
export default defineScenario({
  name: 'shared-browse',
  description: 'Closed-model browsing with no setup, for the shared-quota test',
  plan: 'free',
  workload: { executor: 'constant-vus', vus: 6, duration: '18s' },
  flows: [
    {
      name: 'browse-pets',
      run: async (api) => {
        await api.listPets({ limit: 5 });
      },
    },
  ],
});
