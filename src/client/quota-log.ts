export interface QuotaLog {
  /** Earliest time one more send keeps the quota, given the sends kept. */
  earliest(): number;
  add(at: number): void;
}

/** A ring of the last `limit` send times of one window: the sliding-log form of a quota, exact. */
class SendLog implements QuotaLog {
  private readonly times: Float64Array;
  private next = 0;
  private count = 0;
  constructor(
    readonly limit: number,
    readonly spanMs: number,
  ) {
    this.times = new Float64Array(limit);
  }
  earliest(): number {
    return this.count < this.limit
      ? Number.NEGATIVE_INFINITY
      : (this.times[this.next] as number) + this.spanMs;
  }
  add(at: number): void {
    this.times[this.next] = at;
    this.next = (this.next + 1) % this.limit;
    if (this.count < this.limit) this.count++;
  }
}

/**
 * The same quota for limits too large to keep every send time (a custom plan of millions a day):
 * counts per 1/1000 of the span. A send is taken to have happened at its bucket's end, so the bound
 * errs on the side of waiting, by at most one bucket.
 */
class BucketLog implements QuotaLog {
  private static readonly BUCKETS = 1000;
  private readonly counts = new Float64Array(BucketLog.BUCKETS);
  private readonly bucketMs: number;
  private current = -1;
  private total = 0;
  constructor(
    readonly limit: number,
    readonly spanMs: number,
  ) {
    this.bucketMs = spanMs / BucketLog.BUCKETS;
  }
  private advance(at: number): void {
    const index = Math.floor(at / this.bucketMs);
    if (this.current < 0) this.current = index;
    for (let i = this.current + 1; i <= index && i <= this.current + BucketLog.BUCKETS; i++) {
      const slot = i % BucketLog.BUCKETS;
      this.total -= this.counts[slot] as number;
      this.counts[slot] = 0;
    }
    if (index > this.current) this.current = index;
  }
  earliest(): number {
    if (this.total < this.limit) return Number.NEGATIVE_INFINITY;
    // Full: wait until the oldest non-empty bucket leaves the span.
    for (let i = this.current - BucketLog.BUCKETS + 1; i <= this.current; i++) {
      if ((this.counts[((i % BucketLog.BUCKETS) + BucketLog.BUCKETS) % BucketLog.BUCKETS] as number) > 0) {
        return (i + 1) * this.bucketMs + this.spanMs;
      }
    }
    return Number.NEGATIVE_INFINITY;
  }
  add(at: number): void {
    this.advance(at);
    const slot = this.current % BucketLog.BUCKETS;
    this.counts[slot] = (this.counts[slot] as number) + 1;
    this.total++;
  }
}

/** Exact logs cost 8 bytes a send of the limit; past this, buckets. */
const EXACT_LOG_LIMIT = 100_000;

/** The log of one quota window: exact up to 100,000 a window, in buckets beyond. */
export function quotaLog(limit: number, spanMs: number): QuotaLog {
  return limit <= EXACT_LOG_LIMIT ? new SendLog(limit, spanMs) : new BucketLog(limit, spanMs);
}
