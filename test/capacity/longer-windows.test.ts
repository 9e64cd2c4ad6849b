import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
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
    // What it does not do yet: measure the longer window itself, and report each window.
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
  }, 60_000);
});
