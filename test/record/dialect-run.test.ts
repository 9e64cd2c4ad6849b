import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, getPlan, type PlanTable, planRate, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import type { Contract } from '../../src/record/checks/contract.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { withSimulatedServer } from '../helpers/simulated.ts';

/**
 * The whole chain against a reference server that tells its quota in IETF draft 8 (`RateLimit` and
 * `RateLimit-Policy`, no X-RateLimit-*): judged under `--contract ietf` every check passes, the
 * rate-limit ones evaluated, not skipped into a silent pass; under the seed's contract the same
 * traffic fails the dialect check and no other. The result names the dialect.
 */

const TIME_SCALE = 10;
/** A free plan of 5 a (scaled) minute, so that raw mode meets 429s at once. */
const TINY: PlanTable = {
  ...DEFAULT_PLANS,
  free: { name: 'free', windows: [{ name: 'minute', limit: 5, seconds: 60 }] },
};

const scenario = defineScenario({
  name: 'ietf-8-mix',
  workload: { executor: 'constant-vus', vus: 4, duration: '7s' },
  flows: [
    { name: 'list', weight: 2, run: async (api) => void (await api.listPets({ limit: 2 })) },
    // The deprecated operation (seeded pets 1..3) and a 404 with its Error body.
    { name: 'view', run: async (api, ctx) => void (await api.getPetById(1 + Math.floor(ctx.random() * 3))) },
    { name: 'missing', run: async (api) => void (await api.getCategory(987_654)) },
  ],
});

async function run(contract: Contract, o: { raw?: boolean } = {}): Promise<RunResult> {
  const plans = o.raw ? TINY : DEFAULT_PLANS;
  const windows = scalePlan(getPlan(plans, 'free'), TIME_SCALE).windows;
  const operations = (await loadSpec()).operations;
  return withSimulatedServer(
    { headerDialect: 'ietf-8', timeScale: TIME_SCALE, seedData: 3, plans },
    (server) =>
      executeScenario({
        scenario,
        workload: resolveWorkload(
          scenario.workload,
          planRate(windows),
          o.raw ? { vus: 2, iterations: 14 } : {},
        ),
        baseUrl: server.url,
        target: server.url,
        embeddedTarget: false,
        apiKey: 'free-demo-key',
        operations,
        plan: 'free',
        windows,
        timeScale: TIME_SCALE,
        enforce: !o.raw,
        spec: 'built in',
        seed: 7,
        contract,
        transport: server.transport,
      }),
  );
}

const failing = (r: RunResult) => r.checks.filter((c) => c.failures > 0).map((c) => c.id);
const describeFailures = (r: RunResult) =>
  r.checks
    .filter((c) => c.failures > 0)
    .map((c) => `${c.id}: ${c.failures} failed, e.g. ${c.samples[0]?.detail}`)
    .join('\n');
const evaluated = (r: RunResult, id: string) => {
  const c = r.checks.find((x) => x.id === id);
  return (c?.passes ?? 0) + (c?.failures ?? 0);
};

describe('a run against an IETF draft 8 server', () => {
  let paced: RunResult;
  let raw: RunResult;
  let seed: RunResult;
  beforeAll(async () => {
    // One after another: simulated time is the process's clock, one run's at a time.
    paced = await run('ietf');
    raw = await run('ietf', { raw: true });
    seed = await run('seed');
  }, 60_000);

  it('under --contract ietf: every check passes, the rate-limit ones evaluated', () => {
    expect(resultProblem(paced)).toBeUndefined();
    expect(paced.overall.requests).toBeGreaterThan(20);
    expect(failing(paced), describeFailures(paced)).toEqual([]);
    for (const id of [
      'ratelimit-headers-present',
      'ratelimit-dialect-matches-contract',
      'ratelimit-remaining-bounds',
      'ratelimit-limit-matches-plan',
      'ratelimit-reset-in-window',
      'ratelimit-remaining-never-rises',
      'ratelimit-reset-stable',
      'ratelimit-describes-closest',
    ])
      expect(evaluated(paced, id), id).toBeGreaterThan(0);
  });

  it('names ietf-8 as the dialect of every response, and the contract', () => {
    const answered =
      paced.overall.requests - Object.values(paced.overall.transportErrors).reduce((n, c) => n + c, 0);
    expect(paced.compliance.headerDialect).toEqual({
      contract: 'ietf',
      detected: 'ietf-8',
      alsoSent: [],
      counts: { 'ietf-8': answered },
    });
    expect(paced.config.contract).toBe('ietf');
  });

  it("in raw mode, its 429s too: Retry-After and RateLimit's t agree, 429 only when spent", () => {
    expect(raw.overall.rateLimited).toBeGreaterThan(0);
    expect(failing(raw), describeFailures(raw)).toEqual([]);
    for (const id of ['retry-after-matches-reset', 'ratelimit-429-only-when-spent', 'retry-after-on-429'])
      expect(evaluated(raw, id), id).toBeGreaterThan(0);
    expect(raw.compliance.headerDialect?.detected).toBe('ietf-8');
  });

  it("under the seed's contract the same traffic fails the dialect check alone, saying what came", () => {
    expect(failing(seed), describeFailures(seed)).toEqual(['ratelimit-dialect-matches-contract']);
    const check = seed.checks.find((c) => c.id === 'ratelimit-dialect-matches-contract');
    expect(check?.passes).toBe(0);
    expect(check?.samples[0]?.detail).toBe(
      'the quota is told in RateLimit/RateLimit-Policy (IETF draft 8); the contract promises X-RateLimit-*',
    );
    expect(seed.compliance.headerDialect).toMatchObject({ contract: 'seed', detected: 'ietf-8' });
  });
});
