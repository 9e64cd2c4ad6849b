import { defineScenario } from 'petstore-load';

/**
 * Raw mode on purpose: twice the plan's rate, no pacing, to watch the server's limiter answer 429 and
 * the client honour every Retry-After. The ban guard stays on, so the key is never banned; the
 * result's violations must be 0.
 */
export default defineScenario({
  name: 'over-quota-burst',
  description: 'Exceeds the quota without pacing: 429s, Retry-After honoured, no ban',
  plan: 'free',
  enforce: false,
  workload: { executor: 'constant-arrival-rate', rate: '200%', duration: '15s', maxInFlight: 50 },
  flows: [
    {
      name: 'hammer-list',
      run: async (api) => {
        await api.listPets({ limit: 5 });
      },
    },
  ],
});
