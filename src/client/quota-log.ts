export interface QuotaLog {
  /** Earliest time one more send keeps the quota, given the sends kept. */
  earliest(): number;
  add(at: number): void;
}

/** One window of a quota as a log keeps it: at most `limit` sends in any `spanMs`. */
export interface LogWindow {
  readonly limit: number;
  readonly spanMs: number;
}

/** Below this many entries a log keeps its times in a plain array, past it in a Float64Array. */
const SMALL_LOG = 1024;
const EMPTY: number[] = [];

/**
 * A ring of the last sends of a key, as many as the largest limit of its windows: the sliding-log
 * form of a quota, exact. One ring serves every window of the plan, since a window of limit n is
 * kept when the n-th latest send is a span old: a minute's 60 are the latest 60 of a day's 1,000.
 * It grows as sends come (2, 4, 8, ... up to the limit), so that a key costs memory for the sends it
 * made, not for its plan's limit: 10,000 keys of a 100,000-a-day plan would otherwise hold 8 GB up
 * front. Small rings are plain arrays of doubles, a few dozen bytes, where a typed array costs two
 * objects of its own; large ones are typed arrays, whose length V8 allocates as asked.
 */
class SendLog implements QuotaLog {
  private times: number[] | Float64Array = EMPTY;
  /** Where the next send goes: until the ring holds `capacity` it fills from 0 and does not wrap. */
  private next = 0;
  private count = 0;
  private readonly capacity: number;
  /** Shared by every key of a plan: a key keeps no copy. */
  readonly windows: readonly LogWindow[];

  constructor(windows: readonly LogWindow[]) {
    this.windows = windows;
    let capacity = 0;
    for (const w of windows) capacity = Math.max(capacity, w.limit);
    this.capacity = capacity;
  }
  earliest(): number {
    let at = Number.NEGATIVE_INFINITY;
    for (const w of this.windows) {
      if (this.count < w.limit) continue;
      // The w.limit-th latest send: behind `next`, around the ring once it is full.
      let i = this.next - w.limit;
      if (i < 0) i += this.capacity;
      const t = (this.times[i] as number) + w.spanMs;
      if (t > at) at = t;
    }
    return at;
  }
  add(at: number): void {
    const capacity = this.capacity;
    if (capacity <= 0) return;
    if (this.count < capacity) {
      if (this.count === this.times.length) this.grow();
      this.times[this.count++] = at;
      this.next = this.count === capacity ? 0 : this.count;
      return;
    }
    this.times[this.next] = at;
    this.next = this.next + 1 === capacity ? 0 : this.next + 1;
  }
  /** Doubles the ring, at most to `capacity`. Only ever full and unwrapped here: a plain copy keeps the order. */
  private grow(): void {
    const size = Math.min(this.capacity, Math.max(2, this.times.length * 2));
    const old = this.times;
    // new Array(n) of a small n is a fast holey array; the holes past `count` are never read.
    const grown = size <= SMALL_LOG ? (new Array(size) as number[]) : new Float64Array(size);
    for (let i = 0; i < this.count; i++) grown[i] = old[i] as number;
    this.times = grown;
  }
}

/** Sends a BucketLog keeps as times before it allocates its buckets. */
const EARLY_SENDS = 256;

/**
 * The same quota for limits too large to keep every send time (a custom plan of millions a day):
 * counts per 1/1000 of the span. A send is taken to have happened at its bucket's end, so the bound
 * errs on the side of waiting, by at most one bucket. The buckets (8 KB) are allocated only once a
 * key has made a few hundred sends: until then it keeps their times, far below any limit this log
 * serves, and then replays them, which gives the buckets exactly the state they would have had.
 */
class BucketLog implements QuotaLog {
  private static readonly BUCKETS = 1000;
  private counts: Float64Array | undefined;
  private early: number[] | undefined = [];
  private readonly bucketMs: number;
  private current = -1;
  private total = 0;
  readonly limit: number;
  readonly spanMs: number;

  constructor(limit: number, spanMs: number) {
    this.limit = limit;
    this.spanMs = spanMs;
    this.bucketMs = spanMs / BucketLog.BUCKETS;
  }
  private advance(counts: Float64Array, at: number): void {
    const index = Math.floor(at / this.bucketMs);
    if (this.current < 0) this.current = index;
    for (let i = this.current + 1; i <= index && i <= this.current + BucketLog.BUCKETS; i++) {
      const slot = i % BucketLog.BUCKETS;
      this.total -= counts[slot] as number;
      counts[slot] = 0;
    }
    if (index > this.current) this.current = index;
  }
  earliest(): number {
    const counts = this.counts;
    // Still keeping times: fewer sends than any limit of a bucket log.
    if (counts === undefined || this.total < this.limit) return Number.NEGATIVE_INFINITY;
    // Full: wait until the oldest non-empty bucket leaves the span.
    for (let i = this.current - BucketLog.BUCKETS + 1; i <= this.current; i++) {
      if ((counts[((i % BucketLog.BUCKETS) + BucketLog.BUCKETS) % BucketLog.BUCKETS] as number) > 0) {
        return (i + 1) * this.bucketMs + this.spanMs;
      }
    }
    return Number.NEGATIVE_INFINITY;
  }
  add(at: number): void {
    let counts = this.counts;
    if (counts === undefined) {
      const early = this.early as number[];
      if (early.length < EARLY_SENDS) {
        early.push(at);
        return;
      }
      counts = this.counts = new Float64Array(BucketLog.BUCKETS);
      this.early = undefined;
      for (const t of early) this.count(counts, t);
    }
    this.count(counts, at);
  }
  private count(counts: Float64Array, at: number): void {
    this.advance(counts, at);
    const slot = this.current % BucketLog.BUCKETS;
    counts[slot] = (counts[slot] as number) + 1;
    this.total++;
  }
}

/** Exact logs cost up to 8 bytes a send of the limit (as they are used); past this, buckets. */
const EXACT_LOG_LIMIT = 100_000;

/** A log of no window (raw mode): every send may leave, nothing is kept. */
const NO_LOG: QuotaLog = {
  earliest: () => Number.NEGATIVE_INFINITY,
  add: () => undefined,
};

/** Several logs as one: the latest of their earliest times. */
class Logs implements QuotaLog {
  private readonly logs: readonly QuotaLog[];

  constructor(logs: readonly QuotaLog[]) {
    this.logs = logs;
  }
  earliest(): number {
    let at = Number.NEGATIVE_INFINITY;
    for (const log of this.logs) at = Math.max(at, log.earliest());
    return at;
  }
  add(at: number): void {
    for (const log of this.logs) log.add(at);
  }
}

/**
 * The log of every window of a quota: one exact ring for the windows of up to 100,000 sends, and
 * buckets for each larger one. `windows` is kept as given (share one array between keys).
 */
export function quotaLogs(windows: readonly LogWindow[]): QuotaLog {
  if (windows.every((w) => w.limit <= EXACT_LOG_LIMIT))
    return windows.length === 0 ? NO_LOG : new SendLog(windows);
  const exact = windows.filter((w) => w.limit <= EXACT_LOG_LIMIT);
  const logs: QuotaLog[] = windows
    .filter((w) => w.limit > EXACT_LOG_LIMIT)
    .map((w) => new BucketLog(w.limit, w.spanMs));
  if (exact.length > 0) logs.push(new SendLog(exact));
  return logs.length === 1 ? (logs[0] as QuotaLog) : new Logs(logs);
}

/** The log of one quota window: exact up to 100,000 a window, in buckets beyond. */
export function quotaLog(limit: number, spanMs: number): QuotaLog {
  return quotaLogs([{ limit, spanMs }]);
}
