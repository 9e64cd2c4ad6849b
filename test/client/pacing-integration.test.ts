import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import type { RunResult } from '../../src/result/types.ts';
import { defineScenario, type Workload } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { withSimulatedServer } from '../helpers/simulated.ts';

/** Runs a one-flow workload (listPets) against a fresh reference server; also returns the codes of its 429s. */
async function runAgainstServer(options: {
  timeScale: number;
  plan: string;
  enforce: boolean;
  workload: Workload;
}) {
  const { operations } = await loadSpec();
  const windows = scalePlan(getPlan(DEFAULT_PLANS, options.plan), options.timeScale).windows;
  const scenario = defineScenario({
    name: 'pacing-test',
    workload: options.workload,
    flows: [{ name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) }],
  });
  const planRate = (windows[0]?.limit ?? 0) / (windows[0]?.seconds ?? 1);
  const codesOf429: string[] = [];
  const result: RunResult = await withSimulatedServer(
    { timeScale: options.timeScale, seedData: 3 },
    (server) =>
      executeScenario({
        scenario,
        workload: resolveWorkload(scenario.workload, planRate),
        baseUrl: server.url,
        target: server.url,
        embeddedTarget: false,
        apiKey: `${options.plan}-demo-key`,
        operations,
        plan: options.plan,
        windows,
        timeScale: options.timeScale,
        enforce: options.enforce,
        spec: 'built in',
        tap: (attempt) => {
          if (attempt.status === 429) codesOf429.push((attempt.body.json as { code: string }).code);
        },
        transport: server.transport,
      }),
  );
  return { ...result, codesOf429 };
}

describe('plan pacing against the reference server', () => {
  it('holds more virtual users than the plan admits to its quota: no 429, at least 95% used, over 3+ windows', async () => {
    // Free: 60 per minute; time scale 30 makes the minute 2 s, so 7 s cross at least three windows.
    const result = await runAgainstServer({
      timeScale: 30,
      plan: 'free',
      enforce: true,
      workload: { executor: 'constant-vus', vus: 10, duration: '7s' },
    });
    expect(result.compliance.rateLimited).toBe(0);
    expect(result.compliance.violations).toBe(0);
    expect(result.compliance.quotaUtilization).toBeGreaterThanOrEqual(0.95);
    // Never above the plan either: the limiter would have said so with 429s, but check the count too.
    expect(result.compliance.quotaUtilization).toBeLessThanOrEqual(1.02);
    expect(result.compliance.pacingWaitMs).toBeGreaterThan(0);
    // Simulated time costs CPU, not waiting: room for a machine busy with other work.
  }, 120_000);

  it('in raw mode exceeds the quota, sees 429s, waits out every Retry-After and is never banned', async () => {
    const result = await runAgainstServer({
      timeScale: 60,
      plan: 'free',
      enforce: false,
      workload: { executor: 'constant-arrival-rate', rate: '300%', duration: '5s', maxInFlight: 50 },
    });
    const statuses = result.overall.statuses;
    expect(result.compliance.rateLimited).toBeGreaterThan(0);
    expect(result.compliance.violations).toBe(0);
    expect(result.compliance.backoffWaitMs).toBeGreaterThan(0);
    // Not one request was refused as banned: every 429 carried the rate_limited code.
    expect(new Set(result.codesOf429)).toEqual(new Set(['rate_limited']));
    expect(result.checks.filter((c) => c.failures > 0).map((c) => c.id)).toEqual([]);
    expect(statuses['429']).toBe(result.compliance.rateLimited);
    expect(statuses['200']).toBeGreaterThan(0);
  }, 120_000);
});
