import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { runCapacity } from '../../src/capacity/run-capacity.ts';
import type { Transport } from '../../src/client/client.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { evaluateThresholds } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { inSimulatedTime, type SimulatedServer, simulatedServer } from '../helpers/simulated.ts';

/**
 * Capacity's phases keep a schedule against the server's windows: they run in simulated time, the
 * reference server answering in process (test/helpers/simulated.ts), so a second of windows costs
 * only its computation and no neighbour's load can make a paced window fall behind.
 */

// Small limits keep the schedule small: a minute window lasts 1 s.
const PLANS: PlanTable = applyPlanOverrides(DEFAULT_PLANS, {
  free: { perMinute: 20, perDay: 1000 },
  pro: { perMinute: 30, perDay: 10_000 },
  business: { perMinute: 40, perDay: 100_000 },
  enterprise: { perMinute: 50, perDay: 1_000_000 },
});
const SCALE = 60;
const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'];
/**
 * Each answer takes a loopback's millisecond: at none, a burst's requests and their answers share one
 * instant, and the header checks could not tell which of them came between a response and a 429.
 */
const LOOPBACK_MS = 1;

// Read before any simulated run: a file read inside one would let its clock race ahead.
const spec = await loadSpec();

function measure(server: SimulatedServer, plans: string[]) {
  return runCapacity({
    target: server.url,
    embeddedTarget: true,
    targets: plans.map((name) => ({
      plan: PLANS[name] as NonNullable<PlanTable[string]>,
      apiKey: `${name}-demo-key`,
      baseUrl: server.url,
      timeScale: SCALE,
      transport: server.transport,
    })),
    windows: 2,
    operations: spec.operations,
    spec: 'built in',
  });
}

describe('capacity against the reference server (time scale 60, small limits)', () => {
  let server: SimulatedServer;
  let run: Awaited<ReturnType<typeof measure>>;
  let elapsedMs = 0;
  beforeAll(async () => {
    server = await simulatedServer({ timeScale: SCALE, plans: PLANS }, LOOPBACK_MS);
    run = await inSimulatedTime(async () => {
      // Simulated time: how long the probes' schedule keeps the plans busy, all four at once.
      const started = Date.now();
      const measured = await measure(server, PLAN_NAMES);
      elapsedMs = Date.now() - started;
      return measured;
    });
  }, 30_000);
  afterAll(() => server?.close());

  it('measures every plan in parallel within seconds', () => {
    expect(run.reports.map((r) => r.plan)).toEqual(PLAN_NAMES);
    expect(elapsedMs).toBeLessThan(15_000);
    // In parallel: the four together take hardly longer than the longest alone, not the sum.
    expect(elapsedMs).toBeLessThan(1.5 * Math.max(...run.reports.map((r) => r.durationMs)));
  });

  it.each(PLAN_NAMES)(
    '%s: the promised limit per window, the first 429 at limit + 1, a fixed window',
    (plan) => {
      const r = run.reports.find((x) => x.plan === plan);
      if (!r) throw new Error(`no report for ${plan}`);
      const limit = PLANS[plan]?.windows.find((w) => w.name === 'minute')?.limit ?? 0;
      expect(r.rate.acceptedPerWindow).toEqual([limit, limit]);
      expect(r.rate.acceptedPerMinute).toBe(limit);
      expect(r.exhaust.first429At).toBe(limit + 1);
      expect(r.exhaust.sent).toBeLessThanOrEqual(limit + 3);
      expect(r.exhaust.retryAfterSeconds).not.toBeNull();
      // Headers carry whole seconds: the quota is back at most a second before the announced reset
      // (simulated timers fire on time, so no more slack than that).
      expect(Math.abs(r.recovery.resetErrorMs as number)).toBeLessThanOrEqual(1000);
      // The probe leaves a millisecond after Retry-After (a real timer may fire a fraction early).
      expect(r.recovery.retryAfterAccuracyMs).toBeLessThanOrEqual(1);
      expect(r.limiter.type).toBe('fixed-window');
      // The window as measured: the seed's dialect, a reset in Unix seconds, the limit per window.
      expect(r.limiter.headerDialect).toBe('seed');
      expect(r.limiter.resetSemantics).toBe('unix-seconds');
      expect(r.limiter.window).toEqual({ limit, seconds: 60 / SCALE });
      expect(r.limiter.burst).toBe(limit);
      expect(r.limiter.sustainedPerSecond).toBeCloseTo(limit / (60 / SCALE), 3);
      expect(r.limiter.rateSearch).toBeNull();
      // Paced at the model it inferred (a window's limit over the window), it drew no 429.
      expect(r.limiter.check).toEqual({ sent: 2 * limit, refused: 0, phase: 'paced-windows' });
      expect(r.violations).toBe(0);
      expect(r.verdict, r.reasons.join('; ')).toBe('pass');
    },
  );

  it('writes a valid RunResult with capacity, every probe recorded, no violation', () => {
    expect(resultProblem(JSON.parse(JSON.stringify(run.result)))).toBeUndefined();
    expect(run.result.capacity).toHaveLength(4);
    expect(run.result.compliance.violations).toBe(0);
    expect(run.result.checks.filter((c) => c.failures > 0).map((c) => c.id)).toEqual([]);
    // The first look's request, and a last phase paced at the model when it was not the plan's.
    const sent = run.reports.reduce(
      (n, r) =>
        n +
        r.rate.sent +
        r.exhaust.sent +
        r.recovery.probes +
        1 +
        (r.limiter.check?.phase === 'model' ? r.limiter.check.sent : 0),
      0,
    );
    expect(run.result.overall.requests).toBe(sent);
    expect(renderHtmlReport(run.result)).toContain('id="capacity"');
  });

  it('gates on capacity.<plan>.<metric> thresholds', () => {
    const ops = new Set(['listPets']);
    const verdicts = evaluateThresholds(
      [
        parseThreshold('capacity.pro.accepted_per_minute>=30', 'cli', ops),
        parseThreshold('capacity.free.first_429_at==21', 'cli', ops),
        parseThreshold('capacity.free.reset_accuracy_ms<=1100', 'cli', ops),
        parseThreshold('capacity.business.retry_after_accuracy_ms<200ms', 'cli', ops),
        parseThreshold('capacity.enterprise.accepted_per_minute>=51', 'cli', ops),
        // A window's burst is its limit (the first 429 came at 21).
        parseThreshold('capacity.free.burst==20', 'cli', ops),
        parseThreshold('capacity.free.sustained_per_second>1000', 'cli', ops),
      ],
      run.result,
    );
    expect(verdicts.map((v) => v.passed)).toEqual([true, true, true, true, false, true, false]);
    expect(verdicts[4]?.detail).toContain('accepted_per_minute was 50');
    expect(verdicts[6]?.detail).toContain('sustained_per_second was');
  });
});

describe('capacity against a leaking limiter', () => {
  it('fails the verdict: no 429 within limit + 3 requests', async () => {
    const server = await simulatedServer(
      { timeScale: SCALE, plans: PLANS, faults: { limiterLeak: 5 } },
      LOOPBACK_MS,
    );
    try {
      const { reports } = await inSimulatedTime(() => measure(server, ['free']));
      const r = reports[0];
      expect(r?.exhaust.sent).toBe(23);
      expect(r?.exhaust.first429At).toBeNull();
      expect(r?.verdict).toBe('fail');
      expect(r?.reasons.join('; ')).toMatch(/no 429 within 23 requests/);
    } finally {
      await server.close();
    }
  }, 20_000);
});

describe('capacity against a target that admits less than the plan promises', () => {
  it('fails the verdict and stops each paced window at its first 429 instead of piling requests on', async () => {
    // The server allows free 10 a window; the probe holds it to the promised 20.
    const server = await simulatedServer(
      {
        timeScale: SCALE,
        plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 10, perDay: 1000 } }),
      },
      LOOPBACK_MS,
    );
    try {
      const { reports, result } = await inSimulatedTime(() => measure(server, ['free']));
      const r = reports[0];
      expect(r?.verdict).toBe('fail');
      expect(r?.rate.acceptedPerWindow.every((n) => n <= 10)).toBe(true);
      // At most a few beyond the target's limit in each paced window, never the rest of the plan's 20.
      expect(r?.rate.sent).toBeLessThanOrEqual(2 * (10 + 3));
      expect(r?.violations).toBe(0);
      expect(result.compliance.violations).toBe(0);
    } finally {
      await server.close();
    }
  }, 30_000);
});

/**
 * A fixed window aligned to the clock (each second a new window of 20), as many services count:
 * the reference server starts a key's window at its first request instead. Served here, as a
 * transport answering in process, since no reference-server option counts this way.
 */
function clockAlignedTarget(): Transport {
  const used = new Map<number, number>();
  return async () => {
    const t = Date.now();
    const window = Math.floor(t / 1000);
    const n = (used.get(window) ?? 0) + 1;
    const admitted = n <= 20;
    if (admitted) used.set(window, n);
    return {
      status: admitted ? 200 : 429,
      headers: {
        'content-type': 'application/json',
        'x-ratelimit-limit': '20',
        'x-ratelimit-remaining': String(Math.max(0, 20 - (used.get(window) ?? 0))),
        'x-ratelimit-reset': String(window + 1),
        // A window is one second: what is left of it, rounded up, is always 1.
        ...(admitted ? {} : { 'retry-after': '1' }),
      },
      text: admitted ? '[]' : JSON.stringify({ code: 'rate_limited', message: 'limited', status: 429 }),
    };
  };
}

describe('capacity against windows aligned to the clock', () => {
  it('waits for the window the paced requests counted in to end before exhausting one: first 429 at 21', async () => {
    const transport = clockAlignedTarget();
    const url = 'http://127.0.0.1:9';
    await inSimulatedTime(async () => {
      for (let round = 0; round < 3; round++) {
        // Each round on a key whose window holds none of the previous round's requests.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const { reports } = await runCapacity({
          target: url,
          embeddedTarget: false,
          targets: [
            {
              plan: { name: 'free', windows: [{ name: 'minute', limit: 20, seconds: 60 }] },
              apiKey: 'k',
              baseUrl: url,
              timeScale: SCALE,
              transport,
            },
          ],
          windows: 2,
          operations: spec.operations,
          spec: 'built in',
        });
        const r = reports[0];
        expect(r?.rate.acceptedPerWindow, `round ${round}`).toEqual([20, 20]);
        expect(r?.exhaust.first429At, `round ${round}`).toBe(21);
        expect(r?.verdict, r?.reasons.join('; ')).toBe('pass');
      }
    });
  }, 40_000);
});

describe('capacity checks each key against its own plan', () => {
  it("fails ratelimit-limit-matches-plan when the free key is served pro's limits, although pro is probed too", async () => {
    // One recorder holds both keys' responses; a Limit of 30 is pro's, never free's.
    const server = await simulatedServer(
      {
        timeScale: SCALE,
        plans: PLANS,
        keys: { 'free-demo-key': 'pro', 'pro-demo-key': 'pro' },
      },
      LOOPBACK_MS,
    );
    try {
      const { result } = await inSimulatedTime(() => measure(server, ['free', 'pro']));
      const check = result.checks.find((c) => c.id === 'ratelimit-limit-matches-plan');
      expect(check?.failures).toBeGreaterThan(0);
      expect(check?.samples[0]?.detail).toMatch(/Limit 30 is none of 20, 1000/);
    } finally {
      await server.close();
    }
  }, 30_000);
});

describe('capacity thresholds: parsing', () => {
  it('refuses an unknown capacity metric', () => {
    expect(() => parseThreshold('capacity.pro.speed>1', 'cli', new Set())).toThrow(/unknown capacity metric/);
  });
});
