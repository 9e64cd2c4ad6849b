import { type RankedBuckets, rankAtPercentile, valueAtRank } from './histogram-ranks.ts';
import type { Interval } from './rate-intervals.ts';
import type { Variates } from './variates.ts';

/**
 * Bootstrap interval of current/baseline for one percentile of two latency histograms.
 *
 * Resampling n values from a histogram (multinomial over its bucket counts) and reading its j-th
 * smallest is, in distribution, reading the empirical quantile at U, U ~ Beta(j, n - j + 1): the j-th
 * order statistic of n uniforms. Drawing that U directly gives the exact bootstrap distribution of the
 * percentile in O(log buckets) a draw, whatever n, so thousands of draws cost milliseconds and the
 * tail quantiles that a Bonferroni-adjusted level needs are read from enough of them.
 */
export function percentileRatioInterval(
  baseline: RankedBuckets,
  current: RankedBuckets,
  percentile: number,
  tail: number,
  variates: Variates,
): Interval {
  const draws = drawsFor(tail);
  const fromCurrent = resampler(current, percentile, variates);
  const fromBaseline = resampler(baseline, percentile, variates);
  const ratios = new Float64Array(draws);
  for (let i = 0; i < draws; i++) ratios[i] = fromCurrent() / fromBaseline();
  ratios.sort();
  return { lower: quantile(ratios, tail), upper: quantile(ratios, 1 - tail) };
}

/**
 * Enough draws that some 25 fall beyond each end of the interval (2 000 at 95%, 16 000 at the
 * Bonferroni level of sixteen operations), at most 20 000: some 4 ms of CPU per 10 000.
 */
export function drawsFor(tail: number): number {
  return Math.min(20_000, Math.max(2_000, Math.ceil(25 / tail)));
}

/** Draws of the percentile of a resample of the histogram, in µs. */
function resampler(buckets: RankedBuckets, percentile: number, variates: Variates): () => number {
  const n = buckets.total;
  const j = rankAtPercentile(percentile, n);
  const u = variates.beta(j, n - j + 1);
  // The empirical quantile at u: the smallest value with at least u * n samples at or below it.
  return () => valueAtRank(buckets, Math.min(n, Math.max(1, Math.ceil(u() * n))));
}

function quantile(sorted: Float64Array, q: number): number {
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const a = sorted[below] as number;
  return a + ((sorted[above] as number) - a) * (position - below);
}
