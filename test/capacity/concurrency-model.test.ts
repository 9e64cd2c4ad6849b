import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan, PlanTable } from '../../src/api/plans.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';
import {
  announcedEstimates,
  expectConcurrencyAndQueueShown,
  expectConcurrencyLimitFound,
  expectQueueFound,
  expectResultsValid,
  probeWhy,
} from '../helpers/capacity-verdicts.ts';
import { limitConn, limitReq } from '../helpers/simulated-limiters.ts';

/**
 * `capacity` against the limits a rate probe cannot see one request at a time, as models in
 * simulated time (test/helpers/simulated-limiters.ts): nginx `limit_conn` (a 429 for a third request
 * of the key in flight, whatever the rate) over an upstream that answers in 300 ms, and nginx
 * `limit_req` with a burst and no `nodelay`, which holds the excess and releases it at the rate
 * rather than refusing it. That the real nginx answers as these models do is
 * test/capacity/concurrency-limiters.test.ts.
 *
 * limit_conn's plan is 20 per 10 s: at 300 ms an answer, one request in flight keeps 20 in 6 s, so
 * the paced windows are kept. limit_req's plan is its own rate, 2 a second.
 */

const UPSTREAM_LATENCY_MS = 300;
const CONN = 2;
const CONN_PLAN: Plan = { name: 'free', windows: [{ name: 'ten-seconds', limit: 20, seconds: 10 }] };
const QUEUE_RATE_PER_S = 2;
const QUEUE = 5;
const QUEUE_PLAN: Plan = { name: 'free', windows: [{ name: 'ten-seconds', limit: 20, seconds: 10 }] };

/**
 * 100 per 10 s over the same limit_conn: 100 requests of 300 ms, 2 at a time, take 15 s, more than
 * the window: the plan rate cannot be kept, and the probe says so rather than fall behind it.
 */
const TOO_FAST_PLAN: Plan = { name: 'free', windows: [{ name: 'ten-seconds', limit: 100, seconds: 10 }] };

/** The reference server's fixed window, 10 a minute at time scale 10 (6 s), slowed to 300 ms an answer. */
const REFERENCE_SCALE = 10;
const REFERENCE_PLANS: PlanTable = {
  free: { name: 'free', windows: [{ name: 'minute', limit: 10, seconds: 60 }] },
};

const SLOW: ServerOptions = { rateLimit: false, seedData: 3, faults: { latencyMs: UPSTREAM_LATENCY_MS } };
const QUICK: ServerOptions = { rateLimit: false, seedData: 3 };
const SLOW_WINDOW: ServerOptions = {
  limiter: 'fixed',
  timeScale: REFERENCE_SCALE,
  plans: REFERENCE_PLANS,
  keys: { 'free-demo-key': 'free' },
  faults: { latencyMs: UPSTREAM_LATENCY_MS },
};

const runs = new Map<string, ProbeRun>();
const get = (name: string) => runs.get(name) as ProbeRun;

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  const cases: [string, () => Promise<ProbeRun>][] = [
    ['limit_conn', () => probeSimulated(SLOW, CONN_PLAN, 1, (u) => limitConn(u, CONN))],
    ['too-fast', () => probeSimulated(SLOW, TOO_FAST_PLAN, 1, (u) => limitConn(u, CONN))],
    [
      'queue',
      () =>
        probeSimulated(QUICK, QUEUE_PLAN, 1, (u) =>
          limitReq(u, { perSecond: QUEUE_RATE_PER_S, burst: QUEUE }),
        ),
    ],
    [
      'window-and-conn',
      () =>
        probeSimulated(SLOW_WINDOW, REFERENCE_PLANS.free as Plan, REFERENCE_SCALE, (u) => limitConn(u, CONN)),
    ],
    ['slow-window', () => probeSimulated(SLOW_WINDOW, REFERENCE_PLANS.free as Plan, REFERENCE_SCALE)],
  ];
  for (const [name, probe] of cases) runs.set(name, await probe());
}, 120_000);

describe('a model of nginx limit_conn 2 per key over a 300 ms upstream', () => {
  it('is a concurrency limit of 2 in flight, found in under 90 s and within 25% of the time announced', () => {
    expectConcurrencyLimitFound(get('limit_conn'), { conn: CONN, plan: CONN_PLAN });
  });
});

describe('a plan rate the latency cannot keep', () => {
  it('is one reason, the paced windows are not sent, and the time announced holds', () => {
    const run = get('too-fast');
    const { report: r, log } = run;
    const why = probeWhy(run);
    expect(r.limiter.type, why).toBe('concurrency');
    expect(r.limiter.maxInFlight, why).toBe(CONN);
    expect(
      r.reasons.filter((line) => /the plan rate cannot be kept/.test(line)),
      why,
    ).toHaveLength(1);
    expect(r.reasons.join('; ')).not.toMatch(/fell behind/);
    expect(r.rate.sent).toBe(0);
    const announced = announcedEstimates(log).at(-1) as number;
    expect(
      Math.abs(announced - r.durationMs) / r.durationMs,
      `announced ${announced} ms, took ${r.durationMs} ms`,
    ).toBeLessThanOrEqual(0.25);
  });
});

describe('a model of nginx limit_req 2r/s burst=5 without nodelay: a limiter that queues', () => {
  it('holds 5 and releases them at 2 a second (within 2%)', () => {
    expectQueueFound(get('queue'), { queue: QUEUE, perSecond: QUEUE_RATE_PER_S, plan: QUEUE_PLAN });
  });
});

describe('a fixed window over a 300 ms upstream', () => {
  it('is measured within 25% of the time announced once its first answer came', () => {
    const run = get('slow-window');
    const { report: r, log } = run;
    const why = probeWhy(run);
    expect(r.limiter.type, why).toBe('fixed-window');
    expect(r.limiter.maxInFlight ?? null, why).toBeNull();
    const announced = announcedEstimates(log).at(-1) as number;
    expect(
      Math.abs(announced - r.durationMs) / r.durationMs,
      `announced ${announced} ms, took ${r.durationMs} ms`,
    ).toBeLessThanOrEqual(0.25);
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
  });
});

describe('a fixed window behind a model of limit_conn 2, over a 300 ms upstream', () => {
  it('is the window, its first 429 at limit + 1, and at most 2 in flight beside it', () => {
    const run = get('window-and-conn');
    const { report: r, result } = run;
    const why = probeWhy(run);
    expect(r.limiter.type, why).toBe('fixed-window');
    expect(r.limiter.maxInFlight, why).toBe(CONN);
    expect(r.exhaust.first429At, why).toBe(11);
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    // The ramp's refusals for the number in flight, the window's own, and none after the limit was known.
    expect(result.overall.rateLimited, why).toBeLessThanOrEqual(CONN + 1);
    expect(r.violations).toBe(0);
  });
});

describe('the threshold, the summary and the report', () => {
  it('capacity.free.max_in_flight reads the concurrency limit; the table and the HTML show it and the queue', () => {
    expectConcurrencyAndQueueShown(get('limit_conn'), get('queue'), { conn: CONN, queue: QUEUE });
  });
});

describe('the results', () => {
  it('are valid', () => {
    expectResultsValid(runs.entries());
  });
});
