import type { Histogram } from '../record/histogram.ts';
import { JsHistogram } from '../record/histogram.ts';

/**
 * Upper bounds of the classic histogram buckets, seconds: 0.1 ms times 1.5^k up to 65 s (34 bounds,
 * then +Inf), rounded to 3 significant digits so that `le` reads as people write it. A factor of
 * 1.5 keeps histogram_quantile's p99 within one bucket of the HDR p99 while a series stays 37
 * samples (buckets, sum and count) per operation.
 */
export const BUCKET_BOUNDS_SECONDS: readonly number[] = Array.from({ length: 34 }, (_, k) =>
  Number((0.0001 * 1.5 ** k).toPrecision(3)),
);

/** The `le` label of each bound, and of the last bucket. */
export const BUCKET_LABELS: readonly string[] = [...BUCKET_BOUNDS_SECONDS.map(String), '+Inf'];

const BOUNDS_US = BUCKET_BOUNDS_SECONDS.map((s) => s * 1e6);

export interface ClassicHistogram {
  /** Cumulative counts at or below each bound, then the total (+Inf). */
  cumulative: number[];
  count: number;
  /** Seconds. */
  sum: number;
}

const cache = new WeakMap<Histogram, ClassicHistogram>();

/** What a counts index means, the same for every histogram of one layout. */
interface Layout {
  /** The classic bucket each index falls in (BOUNDS_US.length: above every bound). */
  bucketOf: Uint8Array;
  /** The value each index stands for in hdr's mean (its median equivalent value), µs. */
  middle: Float64Array;
}

/**
 * By unit and sub-bucket count: what an index means does not depend on the array's length, so one
 * layout, as long as the longest array seen, serves every recorder's histograms (computed again only
 * when one grows past it). Asking hdr for every index's top at every push, then walking again for
 * its mean with its iterator, cost 1.5 to 3.5 ms per histogram of 8192 counts; with the layout a
 * walk only adds counts.
 */
const layouts = new Map<string, Layout>();

function layoutOf(h: JsHistogram): Layout {
  const key = `${h.unitMagnitude}/${h.subBucketHalfCountMagnitude}`;
  const known = layouts.get(key);
  if (known && known.bucketOf.length >= h.countsArrayLength) return known;
  const layout = {
    bucketOf: new Uint8Array(h.countsArrayLength),
    middle: new Float64Array(h.countsArrayLength),
  };
  let b = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    const value = h.valueFromIndex(i);
    const top = h.highestEquivalentValue(value);
    // Indexes rise with values: the bound only ever moves up.
    while (b < BOUNDS_US.length && top > (BOUNDS_US[b] as number)) b++;
    layout.bucketOf[i] = b;
    layout.middle[i] = h.medianEquivalentValue(value);
  }
  layouts.set(key, layout);
  return layout;
}

/**
 * An HDR histogram (µs) as classic buckets, read at push time: one walk of its counts array. A
 * recorded value falls at or below a bound when the top of its HDR bucket does (the value hdr's own
 * percentiles report), so a percentile read from both lands in the same bucket; the sum is hdr's
 * mean times the count. A histogram that has not changed since the last push (same count) is not
 * walked again.
 */
export function classicBuckets(h: Histogram): ClassicHistogram {
  const cached = cache.get(h);
  if (cached && cached.count === h.totalCount) return cached;
  if (!(h instanceof JsHistogram)) throw new Error('classicBuckets needs a JsHistogram');
  const { bucketOf, middle } = layoutOf(h);
  const perBucket = new Array<number>(BOUNDS_US.length + 1).fill(0);
  let sumUs = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    const n = h.getCountAtIndex(i);
    if (n <= 0) continue;
    const b = bucketOf[i] as number;
    perBucket[b] = (perBucket[b] as number) + n;
    sumUs += (middle[i] as number) * n;
  }
  const cumulative: number[] = [];
  let running = 0;
  for (const n of perBucket) {
    running += n;
    cumulative.push(running);
  }
  const result = { cumulative, count: h.totalCount, sum: sumUs / 1e6 };
  cache.set(h, result);
  return result;
}
