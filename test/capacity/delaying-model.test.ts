import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan, PlanTable } from '../../src/api/plans.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';
import { expectSlowDownFound, expectSlowDownShown } from '../helpers/capacity-verdicts.ts';
import { slowDown } from '../helpers/simulated-limiters.ts';

/**
 * `capacity` against limiters that hold requests back rather than only refuse them, in simulated
 * time: a sliding window that counts refused requests too (the reference server's `--count-refused`,
 * as gateways that count every request they see), told in the seed's headers and in none, and a
 * model of express-slow-down (test/helpers/simulated-limiters.ts), which never refuses but holds each
 * request past `delayAfter` 100 ms longer than the last. That the real express-slow-down holds as
 * its model does is test/capacity/delaying-limiters.test.ts.
 */

const SLIDING_PLANS: PlanTable = {
  free: { name: 'free', windows: [{ name: 'window', limit: 10, seconds: 10 }] },
};
const SLOW_DOWN = { delayAfter: 5, delayMs: 100 };
const SLOW_DOWN_PLAN: Plan = { name: 'free', windows: [{ name: 'window', limit: 10, seconds: 5 }] };

/** `bare`: a 429 without Retry-After either, as nginx answers: the probe times its return itself. */
const countingSliding = (headerDialect: 'seed' | 'none', bare = false) =>
  probeSimulated(
    {
      limiter: 'sliding',
      countRefused: true,
      headerDialect,
      ...(bare ? { faults: { noRetryAfter: true } } : {}),
      plans: SLIDING_PLANS,
      keys: { 'free-demo-key': 'free' },
      seedData: 3,
    },
    SLIDING_PLANS.free as Plan,
  );

const runs = new Map<string, ProbeRun>();
const get = (name: string) => runs.get(name) as ProbeRun;

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  const cases: [string, () => Promise<ProbeRun>][] = [
    ['sliding-seed', () => countingSliding('seed')],
    ['sliding-none', () => countingSliding('none')],
    ['sliding-bare', () => countingSliding('none', true)],
    [
      'slow-down',
      () =>
        probeSimulated({ rateLimit: false, seedData: 3 }, SLOW_DOWN_PLAN, 1, (u) => slowDown(u, SLOW_DOWN)),
    ],
  ];
  for (const [name, probe] of cases) runs.set(name, await probe());
}, 120_000);

describe('a sliding window of 10 per 10 s that counts refused requests', () => {
  it('told in the seed headers: a sliding window of 10 per 10 s, not a token bucket', () => {
    const { report: r, result } = get('sliding-seed');
    const why = r.limiter.evidence.join('; ');
    expect(r.limiter.type, why).toBe('sliding-window');
    expect(r.limiter.window, why).toEqual({ limit: 10, seconds: 10 });
    expect(r.limiter.rateSearch).toBeNull();
    expect(r.exhaust.first429At).toBe(11);
    // The probe waits out every Retry-After, so its own refusals never keep the quota from it.
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    expect(r.violations).toBe(0);
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
    expect(resultProblem(result)).toBeUndefined();
  });

  it('told in no header: a window of 10, its whole quota back at once', () => {
    const { report: r } = get('sliding-none');
    const why = r.limiter.evidence.join('; ');
    expect(r.limiter.type, why).not.toBe('token-bucket');
    expect(r.limiter.type, why).not.toBe('gcra');
    expect(r.limiter.rateSearch).toBeNull();
    expect(r.limiter.window?.limit, why).toBe(10);
    // Its length is bounded from the return alone (Retry-After's whole seconds): at most 10 s.
    expect(r.limiter.window?.seconds, why).toBeGreaterThan(9.5);
    expect(r.limiter.window?.seconds, why).toBeLessThanOrEqual(10);
    expect(r.violations).toBe(0);
  });

  it('a bare 429: the refused return probes it still counts are told, and it stays a window of 10 per 10 s', () => {
    const { report: r } = get('sliding-bare');
    const why = r.limiter.evidence.join('; ');
    expect(r.limiter.type, why).not.toBe('token-bucket');
    expect(r.limiter.type, why).not.toBe('gcra');
    expect(r.limiter.rateSearch).toBeNull();
    expect(r.limiter.window, why).toEqual({ limit: 10, seconds: 10 });
    expect(why).toMatch(/counts refused requests too/);
    expect(r.violations).toBe(0);
  });
});

describe('a model of express-slow-down: delays rather than refuses', () => {
  it('a threshold of 5 and 100 ms more per request (within 10%), found in bounded requests', () => {
    expectSlowDownFound(get('slow-down'), { slowDown: SLOW_DOWN, plan: SLOW_DOWN_PLAN });
  });

  it('the summary and the HTML capacity table show the delay', () => {
    expectSlowDownShown(get('slow-down'), SLOW_DOWN.delayAfter);
  });
});
