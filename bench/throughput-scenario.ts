import { defineScenario } from '../src/scenario/define.ts';

/** One cheap read, as fast as the virtual users go: what bench:workers runs through `run --workers`. */
export default defineScenario({
  name: 'throughput',
  description: 'getPetById flat out (closed model), for bench:workers',
  plan: 'enterprise',
  workload: { executor: 'constant-vus', vus: 16, duration: '5s' },
  flows: [{ name: 'get-pet', run: async (api) => void (await api.getPetById(1)) }],
});
