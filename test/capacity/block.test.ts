import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan, PlanTable } from '../../src/api/plans.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { resultProblem } from '../../src/result/validate.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';
import { blocking } from '../helpers/simulated-limiters.ts';

/**
 * `capacity` against a key blocked for 30 s at its first excess (the reference server's `--block`,
 * on a plan of 10 per 10 s), in simulated time: a told wait longer than the window is measured, not
 * a stop, as far as `--max-wait` goes.
 */

const PLAN: Plan = { name: 'free', windows: [{ name: 'short', limit: 10, seconds: 10 }] };
const PLANS: PlanTable = { free: PLAN };
const BLOCK_S = 30;
const blocked = (over: ServerOptions = {}): ServerOptions => ({
  plans: PLANS,
  keys: { 'free-demo-key': 'free' },
  seedData: 3,
  blockMs: BLOCK_S * 1000,
  ...over,
});

const runs = new Map<string, ProbeRun>();
const get = (name: string) => runs.get(name) as ProbeRun;

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  runs.set('seed', await probeSimulated(blocked(), PLAN));
  runs.set('short', await probeSimulated(blocked(), PLAN, 1, undefined, 10_000));
  runs.set('silent', await probeSimulated(blocked({ headerDialect: 'none' }), PLAN));
  // A token bucket of 10 refilled at 1/s that blocks 30 s at its first excess (a caching proxy's).
  runs.set(
    'bucket',
    await probeSimulated(blocked({ limiter: 'token-bucket', burst: 10, refusalStatus: 503 }), PLAN),
  );
  // A proxy whose block starts anew at each request inside it, in front of an unlimited server.
  runs.set(
    'extending',
    await probeSimulated({ rateLimit: false, seedData: 3 }, PLAN, 1, (u) =>
      blocking(u, { limit: 10, windowMs: 10_000, blockMs: BLOCK_S * 1000, extends: true }),
    ),
  );
  // No block, but a second window of 15 per 100 s, spent in the second paced window.
  const twoWindows: Plan = {
    name: 'free',
    windows: [...PLAN.windows, { name: 'long', limit: 15, seconds: 100 }],
  };
  runs.set(
    'longer-window',
    await probeSimulated(
      { plans: { free: twoWindows }, keys: { 'free-demo-key': 'free' }, seedData: 3 },
      twoWindows,
    ),
  );
}, 120_000);

describe('a block of 30 s at the first excess, the window told in headers', () => {
  it('is measured and named, and the window under it is reported and passes', () => {
    const { report: r, result } = get('seed');
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.limiter.block, why).toBeDefined();
    expect(Math.abs((r.limiter.block?.seconds ?? 0) - BLOCK_S)).toBeLessThanOrEqual(2);
    expect(r.limiter.block?.afterExcessOf).toBe(1);
    expect(r.limiter.block?.extendedByProbes).toBe(false);
    expect(r.limiter.evidence.join('; ')).toMatch(/blocks a key 3\d(\.\d)? s at its first excess/);
    expect(r.limiter.type).toBe('fixed-window');
    expect(r.limiter.window).toEqual({ limit: 10, seconds: 10 });
    expect(r.exhaust.first429At).toBe(11);
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    expect(r.verdict, why).toBe('pass');
    // The one request inside the block was sent on purpose, and is no violation.
    expect(r.violations).toBe(0);
    expect(result.compliance.violations).toBe(0);
    expect(resultProblem(result)).toBeUndefined();
    expect(renderHtmlReport(result)).toContain('blocks 3');
  });

  it('past --max-wait it is not waited for: the probe stops, saying which', () => {
    const { report: r, elapsedMs } = get('short');
    expect(r.limiter.block ?? null).toBeNull();
    expect(r.reasons[0]).toMatch(/announced a wait of \d+(\.\d)? s, longer than --max-wait \(10 s\)/);
    expect(r.verdict).toBe('fail');
    expect(elapsedMs).toBeLessThan(get('seed').elapsedMs - 20_000);
  });
});

describe('a block that each request inside it starts anew', () => {
  it('is reported as prolonged by the one request sent inside it, and waited out after that', () => {
    const { report: r, result } = get('extending');
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.limiter.block?.extendedByProbes, why).toBe(true);
    expect(r.limiter.block?.seconds).toBe(BLOCK_S);
    expect(r.limiter.evidence.join('; ')).toContain('a request inside it prolonged it');
    // Waited out from the request inside it, and the return judged by what that request was told.
    expect(r.recovery.quotaBackAt).not.toBeNull();
    expect(r.verdict, why).toBe('pass');
    expect(result.compliance.violations).toBe(0);
  });
});

describe('a longer window spent before the excess', () => {
  it('is not taken for a block: the probe stops, saying a longer quota is spent', () => {
    const { report: r } = get('longer-window');
    expect(r.limiter.block ?? null).toBeNull();
    expect(r.reasons[0], r.reasons.join(' / ')).toMatch(
      /longer than the 10 s short window: a longer quota \(the day's\?\) is spent/,
    );
    expect(r.verdict).toBe('fail');
    expect(r.violations).toBe(0);
  });
});

describe('a block of 30 s at the first excess, told by Retry-After alone', () => {
  it('is measured and named, and the rate under it too, without another block; the model is not named', () => {
    const { report: r, result } = get('silent');
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.limiter.headerDialect).toBe('none');
    expect(Math.abs((r.limiter.block?.seconds ?? 0) - BLOCK_S)).toBeLessThanOrEqual(2);
    // A window of 10 per 10 s and a bucket of 10 at 1/s admit alike at that pace: the rate is told.
    expect(r.limiter.type, why).toBe('unknown');
    expect(r.limiter.sustainedPerSecond, why).toBeCloseTo(1, 1);
    expect(r.limiter.evidence.join('; ')).toMatch(/a window of 10 or a bucket of it/);
    // The rate it claims, checked: spaced at it, nothing refused.
    expect(r.limiter.check?.refused, why).toBe(0);
    // One excess only: the exhaustion's.
    expect(result.compliance.rateLimited, why).toBe(1);
    expect(result.compliance.violations).toBe(0);
    expect(resultProblem(result)).toBeUndefined();
  });
});

describe('a token bucket of 10 at 1/s that blocks 30 s at its first excess, refusing with 503', () => {
  it('is a token bucket at 1/s beside its block, its rate kept on the refill alone, checked with no refusal', () => {
    const { report: r, result } = get('bucket');
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.limiter.type, why).toBe('token-bucket');
    expect(Math.abs((r.limiter.sustainedPerSecond ?? 0) - 1), why).toBeLessThanOrEqual(0.1);
    expect(Math.abs((r.limiter.block?.seconds ?? 0) - BLOCK_S), why).toBeLessThanOrEqual(2);
    expect(r.limiter.refusalStatus).toBe(503);
    expect(r.reasons).toContain("refuses with 503, not 429 as the seed's contract says");
    expect(r.limiter.check?.refused, why).toBe(0);
    expect(result.compliance.rateLimited, why).toBe(1);
    expect(result.compliance.violations).toBe(0);
  });
});
