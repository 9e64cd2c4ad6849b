import { describe, expect, it } from 'vitest';
import { inferLimiter, type LimiterObservations } from '../../src/capacity/measure/infer-limiter.ts';

/**
 * A window's length from its return: the return is probed at a whole-second announcement and after
 * the answers' latency, so it is measured late. Where the paced windows were admitted whole a window
 * apart, a return a little later than the plan's window is that window; a return a whole longer
 * window later (another window told its reset) is not.
 */
const observed = (backAfterMs: number, pacedKept: boolean): LimiterObservations => ({
  family: 'window',
  plan: { limit: 10, seconds: 6 },
  burstAdmitted: 10,
  burstStartedAt: 1_000_000,
  quotaBackAt: 1_000_000 + backAfterMs,
  atOnce: 10,
  atOnceFrom: 'remaining',
  remainingAfterTenth: 9,
  headerLimit: 10,
  declaredWindowSeconds: undefined,
  resetValuesPerWindow: [1, 1],
  headerDialect: 'seed',
  resetSemantics: 'unix-seconds',
  search: undefined,
  estimate: null,
  returnRangeMs: null,
  returnSlackMs: 100,
  pacedKept,
});

describe('a window measured late by the latency', () => {
  it('is the plan window when the paced windows were admitted whole', () => {
    const l = inferLimiter(observed(7_380, true));
    expect(l.window).toEqual({ limit: 10, seconds: 6 });
    expect(l.evidence.join('; ')).toContain('later than the window by the answers');
  });

  it('is what was measured when the paced windows tell nothing', () => {
    expect(inferLimiter(observed(7_380, false)).window?.seconds).toBeGreaterThan(7);
  });

  it('is what was measured when it came back a whole longer window later', () => {
    expect(inferLimiter(observed(30_000, true)).window?.seconds).toBeGreaterThan(29);
  });
});
