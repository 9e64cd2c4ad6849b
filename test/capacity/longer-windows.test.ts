import { describe, expect, it } from 'vitest';
import type { Plan, RateWindow } from '../../src/api/plans.ts';
import { probeSimulated } from '../helpers/capacity-cases.ts';

/**
 * A plan of two short windows at once, 10 per 10 s and 20 per 30 s (the reference server's headers
 * telling whichever is nearer to spent), in simulated time: the paced windows spend the longer one,
 * so the shorter is exhausted only once their requests have left it.
 */
const PLAN: Plan = {
  name: 'free',
  windows: [
    { name: 'ten', limit: 10, seconds: 10 },
    { name: 'thirty', limit: 20, seconds: 30 },
  ],
};

describe('a plan of two windows, the longer spent by the paced windows', () => {
  it('exhausts the shorter once the longer is back, reads its return against its own limit, and passes', async () => {
    const {
      report: r,
      result,
      log,
      elapsedMs,
    } = await probeSimulated({ plans: { free: PLAN }, keys: { 'free-demo-key': 'free' }, seedData: 3 }, PLAN);
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    expect(r.exhaust.first429At, why).toBe(11);
    expect(log.join('\n')).toContain("the plan's 30 s window counted the paced requests");
    // At the return the headers told the longer window (nearer to spent): read as another window's.
    expect(r.limiter.type, why).toBe('fixed-window');
    expect(r.limiter.window).toEqual({ limit: 10, seconds: 10 });
    expect(r.limiter.evidence.join('; ')).toContain(
      'the headers told limits of 10 and 20: several windows at once',
    );
    expect(r.verdict, why).toBe('pass');
    expect(result.compliance.violations).toBe(0);
    // Each window measured, shortest first: the longer one spent from the exhaustion to its return.
    const [ten, thirty] = r.limiter.windows ?? [];
    expect(ten).toMatchObject({ limit: 10, seconds: 10, measured: true });
    expect(thirty?.measured, thirty?.evidence).toBe(true);
    expect(thirty?.limit).toBe(20);
    expect(Math.abs((thirty?.seconds ?? 0) - 30)).toBeLessThanOrEqual(3);
    // Within 3 windows of 30 s and 30 s, and the time said at the start within 25%.
    expect(elapsedMs).toBeLessThanOrEqual(3 * 30_000 + 30_000);
    const said = Number(/about (\d+) s in all/.exec(log.join('\n'))?.[1]) * 1000;
    expect(Math.abs(said - elapsedMs)).toBeLessThanOrEqual(0.25 * elapsedMs);
  }, 60_000);

  it('fails the plan whose longer window admits fewer than it promises', async () => {
    const promised: Plan = {
      ...PLAN,
      windows: [PLAN.windows[0] as RateWindow, { name: 'thirty', limit: 25, seconds: 30 }],
    };
    const { report: r } = await probeSimulated(
      { plans: { free: PLAN }, keys: { 'free-demo-key': 'free' }, seedData: 3 },
      promised,
    );
    expect(r.limiter.windows?.[1]).toMatchObject({ limit: 20, measured: true });
    expect(r.verdict).toBe('fail');
    expect(r.reasons.join('; ')).toContain('the thirty window admitted 20, fewer than the plan');
  }, 60_000);
});

describe('a longer window that counts for longer than the plan says', () => {
  it('is reported as measured, 20 per 45 s against a plan of 30 s, and fails the plan', async () => {
    const server: Plan = {
      ...PLAN,
      windows: [PLAN.windows[0] as RateWindow, { name: 'thirty', limit: 20, seconds: 45 }],
    };
    const { report: r } = await probeSimulated(
      { plans: { free: server }, keys: { 'free-demo-key': 'free' }, seedData: 3 },
      PLAN,
    );
    const thirty = r.limiter.windows?.[1];
    expect(thirty?.measured, thirty?.evidence).toBe(true);
    expect(thirty?.limit).toBe(20);
    expect(Math.abs((thirty?.seconds ?? 0) - 45)).toBeLessThanOrEqual(3);
    expect(r.verdict).toBe('fail');
    expect(r.reasons.join('; ')).toContain('the thirty window counted requests for');
  }, 60_000);
});

describe('a plan whose longer window the probe cannot fill', () => {
  it('is not waited for: 1000 per 60 s beside 10 per 10 s', async () => {
    const roomy: Plan = {
      name: 'free',
      windows: [
        { name: 'ten', limit: 10, seconds: 10 },
        { name: 'minute', limit: 1000, seconds: 60 },
      ],
    };
    const { report: r, log } = await probeSimulated(
      { plans: { free: roomy }, keys: { 'free-demo-key': 'free' }, seedData: 3 },
      roomy,
    );
    expect(r.exhaust.first429At).toBe(11);
    expect(log.join('\n')).not.toContain('counted the paced requests');
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
    // Listed as the plan's, unmeasured, saying why.
    expect(r.limiter.windows?.[1]).toMatchObject({ limit: 1000, seconds: 60, measured: false });
    expect(r.limiter.windows?.[1]?.evidence).toContain('cannot be filled');
  }, 60_000);
});
