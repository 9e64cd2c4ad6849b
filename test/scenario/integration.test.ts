import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { allCheckIds, CHECKS } from '../../src/record/checks/catalogue.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { loadScenario, SCENARIOS_DIR } from '../../src/scenario/load.ts';
import type { FaultOptions } from '../../src/server/index.ts';
import { describeChecks, failingChecks, failuresByCheck, runInProcess } from '../helpers/integration-run.ts';

/**
 * The engine, client, recorder and result together (executeScenario: the CLI's own wiring of
 * ApiClient, Recorder, runScenario and buildResult) against in-process reference servers, time-scaled
 * (60: a free minute lasts 1 s). Each fault of the server that breaks a header rule must fail the
 * check that states the rule, and only that one; every scenario shipped must run and, together, call
 * every operation of the table; and what a run builds must follow the result schema.
 */

const TIME_SCALE = 60;
const HEADER_CHECKS = [
  'ratelimit-headers-present',
  'ratelimit-remaining-bounds',
  'ratelimit-limit-matches-plan',
  'ratelimit-reset-in-window',
  'retry-after-on-429',
];

/** A small mix of reads: lists, the deprecated getPetById (seeded pets 1..20) and a 404 with its Error body. */
const probe = defineScenario({
  name: 'header-probe',
  plan: 'free',
  // The tests bound it by iterations, not time: concurrent tests in one worker share an event loop,
  // and a run bounded by time would send little while another one starts its server.
  workload: { executor: 'constant-vus', vus: 2, duration: '30s' },
  flows: [
    {
      name: 'list',
      run: async (api) => {
        await api.listPets({ limit: 5 });
      },
    },
    {
      name: 'view',
      run: async (api, ctx) => {
        await api.getPetById(1 + Math.floor(ctx.random() * 20));
      },
    },
    {
      name: 'missing',
      run: async (api) => {
        await api.getCategory(987_654);
      },
    },
  ],
});

/** A free plan of 5 requests per (scaled) minute, so that raw mode meets 429s at once. */
const TINY_PLANS: PlanTable = {
  ...DEFAULT_PLANS,
  free: { name: 'free', windows: [{ name: 'minute', limit: 5, seconds: 60 }] },
};

interface FaultCase {
  name: string;
  faults: FaultOptions;
  /** The one check that must fail, or undefined when none may. */
  fails: string | undefined;
  /** The tiny plan in raw mode: 429s. */
  tiny?: boolean;
  /** 429s although the client paces (the fault refuses requests within the quota). */
  limited?: boolean;
  vus?: number;
  iterations?: number;
}

/**
 * The paced cases run with 3 s minutes: responses are compared only when answered more than a
 * second before their window's Reset, and with 1 s windows an unlucky phase leaves few such pairs.
 */
const PACED_TIME_SCALE = 20;

const CASES: FaultCase[] = [
  { name: 'no fault', faults: {}, fails: undefined },
  { name: 'no fault (raw mode, tiny plan)', faults: {}, fails: undefined, tiny: true },
  {
    name: 'no fault (raw mode, tiny plan, 8 VUs)',
    faults: {},
    fails: undefined,
    tiny: true,
    vus: 8,
    iterations: 24,
  },
  {
    name: 'omitHeader x-ratelimit-limit',
    faults: { omitHeader: 'x-ratelimit-limit' },
    fails: 'ratelimit-headers-present',
  },
  {
    name: 'omitHeader x-ratelimit-remaining',
    faults: { omitHeader: 'x-ratelimit-remaining' },
    fails: 'ratelimit-headers-present',
  },
  {
    name: 'omitHeader x-ratelimit-reset',
    faults: { omitHeader: 'x-ratelimit-reset' },
    fails: 'ratelimit-headers-present',
  },
  { name: 'wrongRemaining 10', faults: { wrongRemaining: 10 }, fails: 'ratelimit-remaining-bounds' },
  { name: 'resetAsDelta', faults: { resetAsDelta: true }, fails: 'ratelimit-dialect-matches-contract' },
  {
    name: 'noRetryAfter (raw mode, tiny plan)',
    faults: { noRetryAfter: true },
    fails: 'retry-after-on-429',
    tiny: true,
  },
  { name: 'remainingRises', faults: { remainingRises: true }, fails: 'ratelimit-remaining-never-rises' },
  { name: 'resetDrift', faults: { resetDrift: true }, fails: 'ratelimit-reset-stable' },
  { name: 'wrongWindowHeaders', faults: { wrongWindowHeaders: true }, fails: 'ratelimit-describes-closest' },
  { name: 'early429', faults: { early429: true }, fails: 'ratelimit-429-only-when-spent', limited: true },
  {
    name: 'retryAfterMismatch 4 (raw mode, tiny plan)',
    faults: { retryAfterMismatch: 4 },
    fails: 'retry-after-matches-reset',
    tiny: true,
    iterations: 7,
  },
  {
    name: 'rejectRetry (raw mode, tiny plan, 1 VU)',
    faults: { rejectRetry: true },
    fails: 'retry-after-retry-succeeds',
    tiny: true,
    vus: 1,
  },
  {
    name: 'cacheable429 (raw mode, tiny plan)',
    faults: { cacheable429: true },
    fails: 'ratelimit-429-not-cacheable',
    tiny: true,
  },
  { name: 'noSunsetLink', faults: { noSunsetLink: true }, fails: 'sunset-link' },
  { name: 'wrongLimit', faults: { wrongLimit: true }, fails: 'ratelimit-limit-matches-plan' },
  {
    name: 'wrongLimit (raw mode, tiny plan)',
    faults: { wrongLimit: true },
    fails: 'ratelimit-limit-matches-plan',
    tiny: true,
  },
  { name: 'errorBodyStatus', faults: { errorBodyStatus: true }, fails: 'error-body' },
  // application/x-json: not application/json, yet the client still parses it (it looks for "json"),
  // so the Error bodies and the response schema still pass.
  { name: 'xJsonContentType', faults: { xJsonContentType: true }, fails: 'json-content-type' },
  { name: 'badDeprecation', faults: { badDeprecation: true }, fails: 'deprecation-headers' },
  { name: 'schemaViolation', faults: { schemaViolation: true }, fails: 'response-schema' },
];

describe('header faults fail exactly their check', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.fails ?? 'no check'} fails`, async ({ expect }) => {
      // 5 a second for the tiny plan (time scale 60), 20 for the free one (time scale 20).
      const iterations = c.iterations ?? (c.tiny ? 12 : 40);
      const { result } = await runInProcess({
        simulated: true,
        scenario: probe,
        server: {
          timeScale: c.tiny ? TIME_SCALE : PACED_TIME_SCALE,
          faults: c.faults,
          ...(c.tiny ? { plans: TINY_PLANS } : {}),
        },
        enforce: !c.tiny,
        overrides: { iterations, ...(c.vus ? { vus: c.vus } : {}) },
        seed: 7,
      });
      expect(result.workload.iterations, 'every iteration ran').toBe(iterations);
      expect(result.overall.requests, 'traffic was sent').toBeGreaterThanOrEqual(iterations);
      expect(result.compliance.violations, 'no request inside a pause').toBe(0);
      if (c.tiny || c.limited) expect(result.overall.rateLimited, 'met the limiter').toBeGreaterThan(0);
      else expect(result.overall.rateLimited, 'pacing kept under the quota').toBe(0);
      // Every check is reported: the response checks (the response schema's among them), then the client's.
      expect(result.checks.map((ch) => ch.id)).toEqual(allCheckIds());
      expect(failingChecks(result), describeChecks(result)).toEqual(c.fails ? [c.fails] : []);
      const failures = failuresByCheck(result);
      if (c.fails) {
        expect(failures[c.fails]).toBeGreaterThan(0);
        expect(result.overall.checkFailures).toBeGreaterThan(0);
      } else {
        expect(result.overall.checkFailures).toBe(0);
      }
      // The checks the probe is built to reach were evaluated, not all skipped into a silent pass.
      const evaluated = Object.fromEntries(result.checks.map((ch) => [ch.id, ch.passes + ch.failures]));
      const reached = [
        'ratelimit-headers-present',
        'error-body',
        'json-content-type',
        'deprecation-headers',
        'response-schema',
      ];
      if (c.faults.omitHeader !== 'x-ratelimit-limit') reached.push('ratelimit-limit-matches-plan');
      if (!c.faults.omitHeader && !c.faults.resetAsDelta && !c.tiny) {
        reached.push('ratelimit-reset-stable');
        // resetDrift gives every response its own Reset: no two share a window to compare.
        if (!c.faults.resetDrift) reached.push('ratelimit-remaining-never-rises');
        reached.push('ratelimit-describes-closest');
      }
      if (c.tiny && !c.faults.noRetryAfter)
        reached.push('retry-after-matches-reset', 'ratelimit-429-not-cacheable', 'client-waited-retry-after');
      if (c.tiny || c.limited) reached.push('ratelimit-429-only-when-spent');
      for (const id of reached) expect(evaluated[id], id).toBeGreaterThan(0);
      expect(resultProblem(result)).toBeUndefined();
    });
  }

  it('errorRate 0.3 (500s with an Error body): no header check fails', async ({ expect }) => {
    const { result } = await runInProcess({
      simulated: true,
      scenario: probe,
      server: { timeScale: TIME_SCALE, faults: { errorRate: 0.3, seed: 11 } },
      overrides: { iterations: 40 },
      seed: 7,
    });
    expect(result.overall.statuses['500'] ?? 0, 'the fault produced 500s').toBeGreaterThan(0);
    const failures = failuresByCheck(result);
    for (const id of HEADER_CHECKS) expect(failures[id], `${id}\n${describeChecks(result)}`).toBe(0);
    // A 500 is a declared response with an Error body: nothing else fails either.
    expect(failingChecks(result), describeChecks(result)).toEqual([]);
  });
});

describe('the scenarios shipped', () => {
  const ITERATIONS = 40;

  it('each runs briefly, and together they call every operation of the table', async () => {
    const names = readdirSync(SCENARIOS_DIR)
      // The compliance battery is no load: one iteration that spends the window on purpose
      // (test/compliance/compliance-run.test.ts runs it).
      .filter((f) => f.endsWith('.ts') && f !== 'compliance.ts')
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(names.length).toBeGreaterThanOrEqual(5);
    const { operations } = await loadSpec();
    const called = new Set<string>();
    // One after another: simulated time is the process's clock, one run's at a time.
    const runs = [];
    for (const name of names) {
      runs.push(
        await (async () => {
          const scenario = await loadScenario(name);
          // The enterprise plan (6000 a minute) at time scale 1 never holds the traffic back. One virtual
          // user and a fixed seed make the flow choices repeatable; the run ends after its iterations,
          // the duration is only a bound for a slow machine.
          const outcome = await runInProcess({
            simulated: true,
            scenario,
            plan: 'enterprise',
            enforce: true,
            server: { timeScale: 1 },
            overrides: { vus: 1, durationMs: 25_000, iterations: ITERATIONS },
            seed: 42,
          });
          return { name, ...outcome };
        })(),
      );
    }
    for (const { name, result, attempts } of runs) {
      expect(result.workload.iterations, name).toBe(ITERATIONS);
      expect(result.workload.failedIterations, `${name}: ${JSON.stringify(result.workload.flows)}`).toBe(0);
      expect(result.meta.scenario).toBe(name);
      expect(resultProblem(result), name).toBeUndefined();
      expect(failingChecks(result), `${name}\n${describeChecks(result)}`).toEqual([]);
      // The result's operations are exactly those the recorder was given, with every attempt counted.
      const seen = new Set(attempts.map((a) => a.operation.id));
      expect(Object.keys(result.operations).sort(), name).toEqual([...seen].sort());
      expect(result.overall.requests, name).toBe(attempts.length);
      for (const id of seen) called.add(id);
    }
    expect([...called].sort()).toEqual(operations.map((op) => op.id).sort());
  });
});

describe('the result of a run', () => {
  it('validates against the JSON Schema, and a broken copy does not', async () => {
    const scenario = await loadScenario('mixed-traffic');
    const { result } = await runInProcess({
      simulated: true,
      scenario,
      server: { timeScale: TIME_SCALE },
      overrides: { iterations: 20, durationMs: 20_000 },
      seed: 3,
    });
    expect(result.overall.requests).toBeGreaterThan(10);
    expect(result.meta.partial).toBe(false);
    expect(result.meta.scenario).toBe('mixed-traffic');
    expect(resultProblem(result)).toBeUndefined();
    // The round trip through JSON (what result.json holds) validates too.
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toBeUndefined();
    const broken = structuredClone(result) as unknown as { meta: Record<string, unknown> };
    delete broken.meta.partial;
    expect(resultProblem(broken)).toMatch(/partial/);
  });
});

it('the header checks named here are the catalogue’s', () => {
  const ids = CHECKS.map((c) => c.id);
  for (const id of HEADER_CHECKS) expect(ids).toContain(id);
});
