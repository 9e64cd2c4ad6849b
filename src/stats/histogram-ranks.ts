import type { Histogram } from '../record/histogram.ts';
import { JsHistogram } from '../record/histogram.ts';

/**
 * A histogram as its non-empty buckets in order: the value hdr reports for each (the highest value
 * equivalent to it, µs) and the running count up to it. Percentiles and the bootstrap read ranks off
 * this instead of walking the whole counts array each time.
 */
export interface RankedBuckets {
  values: Float64Array;
  /** cumulative[i]: samples at or below values[i]. */
  cumulative: Float64Array;
  total: number;
}

export function rankedBuckets(histogram: Histogram): RankedBuckets {
  // decodeHistogram builds a JsHistogram (useWebAssembly: false); the counts are only reachable there.
  if (!(histogram instanceof JsHistogram)) throw new Error('rankedBuckets needs a JsHistogram');
  const values: number[] = [];
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < histogram.countsArrayLength; i++) {
    const count = histogram.getCountAtIndex(i);
    if (count <= 0) continue;
    total += count;
    values.push(histogram.highestEquivalentValue(histogram.valueFromIndex(i)));
    cumulative.push(total);
  }
  return { values: Float64Array.from(values), cumulative: Float64Array.from(cumulative), total };
}

const ulp = (x: number) => 2 ** (Math.floor(Math.log2(x)) - 52);

/** The rank hdr's getValueAtPercentile reads (its rounding, ulp guard included), so both agree exactly. */
export function rankAtPercentile(percentile: number, total: number): number {
  const fp = (Math.min(percentile, 100) / 100) * total;
  return Math.max(fp > 0 ? Math.ceil(fp - ulp(fp)) : 0, 1);
}

/** The value of the sample of rank `rank` (1-based), in µs. */
export function valueAtRank(buckets: RankedBuckets, rank: number): number {
  const { cumulative, values } = buckets;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cumulative[mid] as number) >= rank) hi = mid;
    else lo = mid + 1;
  }
  return values[lo] ?? 0;
}
