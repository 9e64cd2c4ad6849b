import { describe, expect, it } from 'vitest';
import { mostAdmitted } from '../../src/api/plan-admits.ts';
import type { RateWindow } from '../../src/api/plans.ts';

const w = (limit: number, seconds: number): RateWindow => ({ name: `${seconds}s`, limit, seconds });

describe('mostAdmitted: what a plan admits over a span, all its windows at once', () => {
  it("binds at the tightest window's rate, not the shortest's", () => {
    // 10 per 10 s and 20 per 30 s: over 60 s the longer admits 40, the shorter would promise 60.
    expect(mostAdmitted([w(10, 10), w(20, 30)], 60_000)).toBe(40);
    expect(mostAdmitted([w(20, 30), w(10, 10)], 90_000)).toBe(60);
  });

  it('grants a window its whole limit over a span shorter than itself: a day binds nothing over a minute', () => {
    expect(mostAdmitted([w(60, 60), w(1000, 86_400)], 60_000)).toBe(60);
    expect(mostAdmitted([w(60, 60)], 10_000)).toBe(60);
    expect(mostAdmitted([w(60, 60)], 90_000)).toBe(90);
  });

  it('is 0 for a plan without windows or an empty span', () => {
    expect(mostAdmitted([], 60_000)).toBe(0);
    expect(mostAdmitted([w(60, 60)], 0)).toBe(0);
  });
});
