import { describe, expect, it } from 'vitest';
import { bindingRate, mostAdmitted } from '../../src/api/plan-admits.ts';
import type { RateWindow } from '../../src/api/plans.ts';

const w = (limit: number, seconds: number): RateWindow => ({ name: `${seconds}s`, limit, seconds });

describe('mostAdmitted: what a plan admits over a span to a client that keeps to it, all its windows at once', () => {
  it("binds at the tightest window's rate, not the shortest's", () => {
    // 10 per 10 s and 20 per 30 s: over 90 s the longer admits 60, the shorter would promise 91.
    expect(mostAdmitted([w(10, 10), w(20, 30)], 90_000)).toBe(60);
    expect(mostAdmitted([w(20, 30), w(10, 10)], 60_000)).toBe(40);
  });

  it("paces at the shortest window's rate, with the one request at the span's start", () => {
    expect(mostAdmitted([w(60, 60)], 30_000)).toBe(31);
    expect(mostAdmitted([w(60, 60)], 90_000)).toBe(91);
  });

  it('grants a longer window its whole limit over a span shorter than itself: a day binds nothing over a minute', () => {
    expect(mostAdmitted([w(60, 60), w(1000, 86_400)], 60_000)).toBe(61);
    expect(mostAdmitted([w(60, 60), w(50, 86_400)], 60_000)).toBe(50);
  });

  it('names the rate that binds over the span: the summary says it beside utilisation', () => {
    expect(bindingRate([w(10, 10), w(20, 30)], 90_000)).toBeCloseTo(2 / 3, 9);
    expect(bindingRate([w(60, 60), w(1000, 86_400)], 60_000)).toBe(1);
    expect(bindingRate([], 60_000)).toBe(0);
  });

  it('is 0 for a plan without windows or an empty span', () => {
    expect(mostAdmitted([], 60_000)).toBe(0);
    expect(mostAdmitted([w(60, 60)], 0)).toBe(0);
  });
});
