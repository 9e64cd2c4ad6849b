import { describe, expect, it } from 'vitest';
import { fullJitterMs } from '../../src/api/responses.ts';
import { RetryBudget } from '../../src/client/backoff.ts';

describe('fullJitterMs', () => {
  it('draws from [0, min(cap, base * 2^(attempt - 1)))', () => {
    const base = 100;
    const cap = 10_000;
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(cap, base * 2 ** (attempt - 1));
      expect(fullJitterMs(attempt, base, cap, () => 0)).toBe(0);
      expect(fullJitterMs(attempt, base, cap, () => 0.5)).toBe(ceiling / 2);
      const top = fullJitterMs(attempt, base, cap, () => 1 - Number.EPSILON);
      expect(top).toBeLessThan(ceiling);
      expect(top).toBeGreaterThan(ceiling * 0.999);
    }
    // The ceiling doubles per attempt until the cap.
    expect(fullJitterMs(1, base, cap, () => 0.5)).toBe(50);
    expect(fullJitterMs(2, base, cap, () => 0.5)).toBe(100);
    expect(fullJitterMs(3, base, cap, () => 0.5)).toBe(200);
    expect(fullJitterMs(8, base, cap, () => 0.5)).toBe(5_000);
    expect(fullJitterMs(30, base, cap, () => 0.5)).toBe(5_000);
  });

  it('treats attempt 0 like attempt 1 and uses Math.random by default', () => {
    expect(fullJitterMs(0, 100, 1000, () => 0.5)).toBe(50);
    for (let i = 0; i < 200; i++) {
      const d = fullJitterMs(4, 100, 10_000);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(800);
    }
  });
});

describe('RetryBudget', () => {
  const spend = (budget: RetryBudget, max = 1000) => {
    let n = 0;
    while (n < max && budget.tryRetry()) n++;
    return n;
  };

  it('allows the minimum before any request', () => {
    expect(spend(new RetryBudget())).toBe(10);
    expect(spend(new RetryBudget(0.1, 3))).toBe(3);
    expect(spend(new RetryBudget(0.5, 0))).toBe(0);
  });

  it('allows retries up to ratio x requests once that is above the minimum', () => {
    const budget = new RetryBudget(0.1, 10);
    for (let i = 0; i < 50; i++) budget.request();
    // 0.1 x 50 = 5 < minimum 10.
    expect(spend(budget)).toBe(10);
    for (let i = 0; i < 150; i++) budget.request();
    // 0.1 x 200 = 20 in all, 10 already taken.
    expect(spend(budget)).toBe(10);
    expect(budget.tryRetry()).toBe(false);
    for (let i = 0; i < 10; i++) budget.request();
    expect(spend(budget)).toBe(1);
  });

  it('applies a custom ratio', () => {
    const budget = new RetryBudget(0.5, 1);
    for (let i = 0; i < 40; i++) budget.request();
    expect(spend(budget)).toBe(20);
  });
});
