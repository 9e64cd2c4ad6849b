import { describe, expect, it } from 'vitest';
import { newHistogram } from '../../src/record/histogram.ts';
import { rankedBuckets } from '../../src/stats/histogram-ranks.ts';
import { mannWhitney, mannWhitneyGreater } from '../../src/stats/rank-test.ts';

const buckets = (values: number[]) => {
  const h = newHistogram();
  for (const v of values) h.recordValue(v);
  return rankedBuckets(h);
};

describe('mannWhitneyGreater', () => {
  // Small integers are their own buckets, so the histogram's ties are the samples' ties.
  const a = [1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9, 10];
  const b = [3, 4, 5, 5, 6, 7, 8, 8, 8, 9, 10, 11, 12, 12, 13];

  it('is the one-sided tail of mannWhitney on the same samples, ties included', () => {
    const two = mannWhitney(a, b);
    expect(two.direction).toBe(1);
    expect(mannWhitneyGreater(buckets(a), buckets(b))).toBeCloseTo(two.p / 2, 10);
  });

  it('reads a shift the other way as no evidence of slower, and nothing to test as p = 1', () => {
    expect(mannWhitneyGreater(buckets(b), buckets(a))).toBeGreaterThan(0.9);
    expect(mannWhitneyGreater(buckets([]), buckets(b))).toBe(1);
    expect(mannWhitneyGreater(buckets([5, 5, 5]), buckets([5, 5]))).toBe(1);
  });
});
