import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type Plan } from '../../src/api/plans.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { probeSimulated } from '../helpers/capacity-cases.ts';
import { busyLatency } from '../helpers/simulated.ts';

/**
 * Two windows at once, 10 per 10 s and 20 per 30 s, on the reference server in simulated time:
 * moving (sliding logs) or fixed, with the headers telling them (window-first order) or only 429 and
 * Retry-After (model-first order, where the burst from rest spends the longer window before the
 * probe knows of it). Both windows are measured, the longer one's type told from its return.
 */
const PLAN: Plan = {
  name: 'free',
  windows: [
    { name: 'a', limit: 10, seconds: 10 },
    { name: 'b', limit: 20, seconds: 30 },
  ],
};

const probe = (o: Partial<ServerOptions>) =>
  probeSimulated(
    { plans: { ...DEFAULT_PLANS, free: PLAN }, keys: { 'free-demo-key': 'free' }, seedData: 3, ...o },
    PLAN,
  );

describe('two moving windows', () => {
  for (const headerDialect of ['seed', 'none'] as const)
    it(`are both measured within 10%, the longer typed sliding-window (headers: ${headerDialect})`, async () => {
      const { report: r, result } = await probe({
        limiter: 'sliding',
        longerWindows: 'sliding',
        headerDialect,
      });
      const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
      const [a, b] = r.limiter.windows ?? [];
      expect(a?.measured, why).toBe(true);
      expect(a?.limit).toBe(10);
      expect(Math.abs((a?.seconds ?? 0) - 10)).toBeLessThanOrEqual(1);
      expect(b?.measured, b?.evidence).toBe(true);
      expect(b?.limit, b?.evidence).toBe(20);
      expect(Math.abs((b?.seconds ?? 0) - 30), b?.evidence).toBeLessThanOrEqual(3);
      expect(b?.type, b?.evidence).toBe('sliding-window');
      // The paced windows came after the longer window was whole again: none refused.
      expect(r.rate.acceptedPerWindow, why).toEqual([10, 10]);
      expect(r.rate.rateLimited).toBe(0);
      // The model is checked (told nothing of its kind, at the window it measured whole), after a
      // rest as long as the longer window: paced at it, no refusal.
      expect(r.limiter.check, why).toBeTruthy();
      expect(r.limiter.check?.sent).toBeGreaterThanOrEqual(10);
      expect(r.limiter.check?.refused).toBe(0);
      expect(r.reasons.join('; ')).not.toMatch(/admitted 0|cannot be filled|window counted requests for/);
      expect(result.compliance.violations).toBe(0);
    }, 60_000);
});

describe('two fixed windows', () => {
  for (const headerDialect of ['seed', 'none'] as const)
    it(`type the longer fixed-window (headers: ${headerDialect})`, async () => {
      const { report: r } = await probe({ limiter: 'fixed', longerWindows: 'fixed', headerDialect });
      const b = r.limiter.windows?.[1];
      expect(b?.measured, b?.evidence).toBe(true);
      expect(b?.limit, b?.evidence).toBe(20);
      expect(Math.abs((b?.seconds ?? 0) - 30), b?.evidence).toBeLessThanOrEqual(3);
      expect(b?.type, b?.evidence).toBe('fixed-window');
      expect(r.rate.rateLimited).toBe(0);
    }, 60_000);
});

describe('the model-first order', () => {
  it("pairs the longer window it measured with the plan's", async () => {
    const { report: r, log } = await probe({
      limiter: 'sliding',
      longerWindows: 'sliding',
      headerDialect: 'none',
    });
    expect(log.join('\n')).toContain("the plan's 30 s window counted the burst and its return");
    const b = r.limiter.windows?.[1];
    expect(b?.evidence).toContain('a window of 20 per');
    expect(b?.evidence).not.toContain("the plan's, not measured");
    expect(r.verdict === 'pass' || r.reasons.every((x) => x.includes('no rate-limit reset'))).toBe(true);
  }, 60_000);
});

/**
 * A busy machine: the burst from rest spreads over tens of milliseconds (new sockets, a slow
 * answer), while the requests counted at the return go one after another on warm ones, quicker than
 * the burst's slots come back. Each slot is asked again at its own return, and the window is still
 * a window (10 per 3 s beside 20 per 9 s, told only 429 and Retry-After, as rolling-rate-limiter is).
 */
describe('two moving windows on a busy machine', () => {
  const SHORT: Plan = {
    name: 'free',
    windows: [
      { name: 'a', limit: 10, seconds: 3 },
      { name: 'b', limit: 20, seconds: 9 },
    ],
  };
  const server: Partial<ServerOptions> = {
    plans: { ...DEFAULT_PLANS, free: SHORT },
    keys: { 'free-demo-key': 'free' },
    seedData: 3,
    limiter: 'sliding',
    longerWindows: 'sliding',
    headerDialect: 'none',
  };
  const busy = [
    { lowMs: 5, spanMs: 40, spikeEvery: 0, spikeMs: 0 },
    { lowMs: 10, spanMs: 80, spikeEvery: 5, spikeMs: 300 },
  ];
  for (const [i, latency] of busy.entries())
    it(`measures both, the shorter a window, whatever the round trips (profile ${i + 1}, 6 seeds)`, async () => {
      for (let seed = 1; seed <= 6; seed++) {
        const { report: r } = await probeSimulated(
          server,
          SHORT,
          1,
          undefined,
          undefined,
          undefined,
          busyLatency(seed, latency),
        );
        const why = `seed ${seed}: ${r.limiter.evidence.join('; ')}`;
        expect(r.limiter.window, why).toEqual({ limit: 10, seconds: 3 });
        expect(r.limiter.type, why).not.toMatch(/bucket|counter|gcra/);
        const b = r.limiter.windows?.[1];
        expect(b?.measured, `${why} | ${b?.evidence}`).toBe(true);
        expect(b?.limit, why).toBe(20);
        expect(b?.type, why).toBe('sliding-window');
      }
    }, 60_000);
});
