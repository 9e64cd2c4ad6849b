import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';

describe('plan table', () => {
  it('holds the seed limits and the enterprise default', () => {
    const limits = Object.fromEntries(
      Object.entries(DEFAULT_PLANS).map(([name, p]) => [name, p.windows.map((w) => [w.limit, w.seconds])]),
    );
    expect(limits).toEqual({
      free: [
        [60, 60],
        [1000, 86_400],
      ],
      pro: [
        [300, 60],
        [10_000, 86_400],
      ],
      business: [
        [1000, 60],
        [100_000, 86_400],
      ],
      enterprise: [
        [6000, 60],
        [1_000_000, 86_400],
      ],
    });
  });

  it('overrides one window, replaces all windows, or adds a plan', () => {
    const table = applyPlanOverrides(DEFAULT_PLANS, {
      enterprise: { perMinute: 20_000 },
      burst: { windows: [{ name: 'second', limit: 10, seconds: 1 }] },
      tiny: { perDay: 5 },
    });
    expect(table.enterprise?.windows.map((w) => w.limit)).toEqual([20_000, 1_000_000]);
    expect(table.burst?.windows).toEqual([{ name: 'second', limit: 10, seconds: 1 }]);
    expect(table.tiny?.windows).toEqual([{ name: 'day', limit: 5, seconds: 86_400 }]);
    expect(DEFAULT_PLANS.enterprise?.windows[0]?.limit).toBe(6000);
  });

  it('rejects malformed plan files with a one-line InputError', () => {
    const bad = [
      [{ free: { perMinute: -1 } }, /at \/free\/perMinute: must be >= 1/],
      [{ free: { perMinute: 1.5 } }, /must be integer/],
      [{ free: { perHour: 5 } }, /must NOT have additional properties/],
      [{ free: { windows: [] } }, /must NOT have fewer than 1 items/],
      [{ free: { windows: [{ limit: 1, seconds: 1 }], perMinute: 3 } }, /both windows and perMinute/],
      [{ free: {}, other: {} }, /plan 'other' has no limits/],
      [[1, 2], /must be object/],
    ] as const;
    for (const [input, message] of bad) {
      expect(() => applyPlanOverrides(DEFAULT_PLANS, input, 'plans.json')).toThrow(InputError);
      expect(() => applyPlanOverrides(DEFAULT_PLANS, input, 'plans.json')).toThrow(message);
    }
  });

  it('scales windows, not limits', () => {
    const scaled = scalePlan(getPlan(DEFAULT_PLANS, 'free'), 60);
    expect(scaled.windows).toEqual([
      { name: 'minute', limit: 60, seconds: 1 },
      { name: 'day', limit: 1000, seconds: 1440 },
    ]);
    expect(() => scalePlan(getPlan(DEFAULT_PLANS, 'free'), 0)).toThrow(InputError);
    expect(() => getPlan(DEFAULT_PLANS, 'gold')).toThrow(
      /unknown plan 'gold' \(known: free, pro, business, enterprise\)/,
    );
  });
});
