import { beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { DIALECTS, type Dialect } from '../../src/api/rate-limit-dialect.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { withSimulatedServer } from '../helpers/simulated.ts';

/**
 * The plan told is twice what the server admits, so only the server's own fields can keep the
 * client out of 429s: in every dialect they are read. Without them (`none`) the same run meets a 429
 * in each window, which shows the test can tell the two apart.
 */

const TIME_SCALE = 10;
/** What the server admits: 30 a (scaled) minute of 6 s. */
const SERVER_LIMIT = 30;
const WINDOW_S = 60 / TIME_SCALE;
const SERVER_PLANS = applyPlanOverrides(DEFAULT_PLANS, {
  free: { perMinute: SERVER_LIMIT, perDay: 100_000 },
});
/** What the client is told: twice as many. */
const TOLD = scalePlan(
  getPlan(applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 60, perDay: 100_000 } }), 'free'),
  TIME_SCALE,
);
const DURATION_S = 20;

async function paced(dialect: Dialect | 'none') {
  const { operations } = await loadSpec();
  const scenario = defineScenario({
    name: `dialect-${dialect}`,
    workload: { executor: 'constant-vus', vus: 6, duration: `${DURATION_S}s` },
    flows: [{ name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) }],
  });
  return withSimulatedServer(
    { plans: SERVER_PLANS, timeScale: TIME_SCALE, seedData: 3, headerDialect: dialect },
    (server) =>
      executeScenario({
        scenario,
        workload: resolveWorkload(scenario.workload, 1),
        baseUrl: server.url,
        target: server.url,
        embeddedTarget: false,
        apiKey: 'free-demo-key',
        operations,
        plan: 'free',
        windows: TOLD.windows,
        timeScale: TIME_SCALE,
        enforce: true,
        spec: 'built in',
        transport: server.transport,
      }),
  );
}

describe("pacing on the server's fields, in every dialect, with a plan told twice too high", () => {
  // One after another in simulated time, each with its own server and client.
  const runs = new Map<Dialect | 'none', Awaited<ReturnType<typeof paced>>>();
  beforeAll(async () => {
    for (const d of [...DIALECTS, 'none' as const]) runs.set(d, await paced(d));
  }, 120_000);

  it.each(DIALECTS)('%s: at most one 429, and every whole window the run spans used', (dialect) => {
    const r = runs.get(dialect);
    if (!r) throw new Error('no run');
    expect(r.overall.rateLimited).toBeLessThanOrEqual(1);
    expect(r.compliance.violations).toBe(0);
    // The run spans three whole windows of 6 s: their 90 requests at least, more from the fourth's
    // start (a Reset in ms read as seconds, before, held the key after the first 30).
    expect(r.overall.statuses['200'] ?? 0).toBeGreaterThanOrEqual(
      SERVER_LIMIT * Math.floor(DURATION_S / WINDOW_S),
    );
  });

  it('none: the same run meets the limit again and again', () => {
    const r = runs.get('none');
    expect(r?.overall.rateLimited).toBeGreaterThanOrEqual(2);
  });
});
