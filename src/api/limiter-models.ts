/**
 * The rate-limiting algorithms APIs use, as pure models with the clock passed in: the reference
 * server emulates them (`serve --limiter`), and the client, the checks and `capacity` can predict
 * with the same arithmetic what a server running one of them will do.
 *
 * Every model limits `limit` requests per window of `windowMs` and reports the same four figures,
 * so that any header dialect can tell any model:
 * - `remaining`: requests that would be admitted at this instant, after this one;
 * - `resetMs`: until the whole quota is available again (the IETF drafts' reset: when the quota is
 *   restored);
 * - `retryAfterMs`: until the next request would be admitted, 0 when one would be now.
 * A rejected request is not counted by any model (as nginx and rate-limiter-flexible with a reward),
 * except the sliding log with `countRefused`, as gateways that count every request they see.
 *
 * rate-limiter-flexible has the fixed window only (its BurstyRateLimiter is two fixed windows, and
 * `execEvenly` delays answers rather than modelling anything), so the others are written here.
 */

export const LIMITER_MODELS = ['fixed', 'sliding', 'sliding-counter', 'token-bucket', 'gcra'] as const;
export type LimiterModelName = (typeof LIMITER_MODELS)[number];

/** The models that take a burst: a bucket's size (token-bucket) or extra requests (gcra). */
export const BURST_MODELS: readonly LimiterModelName[] = ['token-bucket', 'gcra'];

export interface Admission {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
}

export interface LimiterModel {
  readonly name: LimiterModelName;
  /** The most requests admitted at one instant: the window's limit, or the bucket's size. */
  readonly capacity: number;
  /** Decides on one request of `key` at `nowMs`; only an admitted request is counted. */
  admit(key: string, nowMs: number): Admission;
  /** What a request at `nowMs` would get, counting nothing. */
  peek(key: string, nowMs: number): Admission;
}

export interface ModelSettings {
  limit: number;
  windowMs: number;
  /** token-bucket: the bucket's size (default `limit`); gcra: extra requests tolerated (default 0). */
  burst?: number;
  /** sliding, sliding-counter: refused requests count too, and age out as admitted ones do. */
  countRefused?: boolean;
}

/** Float division leaves 2.9999999 where 3 is meant; a count must not lose a request to that. */
const EPSILON = 1e-9;

/** How many admissions after which idle keys are forgotten: one pass over the map now and then. */
const SWEEP_EVERY = 4096;

/** One state per key, created on first use and forgotten once it is as good as a fresh one. */
abstract class PerKeyModel<S> implements LimiterModel {
  abstract readonly name: LimiterModelName;
  abstract readonly capacity: number;
  private readonly states = new Map<string, S>();
  private admitsSinceSweep = 0;

  admit(key: string, nowMs: number): Admission {
    // A client address that came once must not be kept for ever.
    if (++this.admitsSinceSweep >= SWEEP_EVERY) this.sweep(nowMs);
    let state = this.states.get(key);
    if (state === undefined) {
      state = this.fresh();
      this.states.set(key, state);
    }
    return this.decide(state, nowMs, true);
  }

  peek(key: string, nowMs: number): Admission {
    return this.decide(this.states.get(key) ?? this.fresh(), nowMs, false);
  }

  protected abstract fresh(): S;
  /** Mutates `state` only when `commit` and the request is admitted. */
  protected abstract decide(state: S, nowMs: number, commit: boolean): Admission;
  /** From when on `state` admits as a fresh one would. */
  protected abstract restoredAt(state: S): number;

  private sweep(nowMs: number): void {
    this.admitsSinceSweep = 0;
    for (const [key, state] of this.states) if (this.restoredAt(state) <= nowMs) this.states.delete(key);
  }
}

function checkSettings(limit: number, windowMs: number): void {
  if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a whole number >= 1`);
  if (!(Number.isFinite(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be > 0`);
}

/**
 * A fixed window that starts with the first request after the previous one ended, as
 * rate-limiter-flexible's memory store does (the server uses that library itself, for its Redis
 * store; this model is for predicting it).
 */
export class FixedWindow extends PerKeyModel<{ start: number; count: number }> {
  readonly name = 'fixed';
  readonly capacity: number;
  readonly limit: number;
  readonly windowMs: number;

  constructor(limit: number, windowMs: number) {
    super();
    this.limit = limit;
    this.windowMs = windowMs;
    checkSettings(limit, windowMs);
    this.capacity = limit;
  }

  protected fresh() {
    return { start: Number.NEGATIVE_INFINITY, count: 0 };
  }

  protected restoredAt(state: { start: number }): number {
    return state.start + this.windowMs;
  }

  protected decide(state: { start: number; count: number }, nowMs: number, commit: boolean): Admission {
    const ended = nowMs >= state.start + this.windowMs;
    const start = ended ? nowMs : state.start;
    const count = ended ? 0 : state.count;
    const allowed = count < this.limit;
    const after = allowed ? count + 1 : count;
    if (allowed && commit) [state.start, state.count] = [start, after];
    const resetMs = start + this.windowMs - nowMs;
    return {
      allowed,
      remaining: this.limit - after,
      resetMs,
      retryAfterMs: after < this.limit ? 0 : resetMs,
    };
  }
}

/**
 * The times of the counted requests still in the span, oldest first, in a ring of `limit` slots;
 * a log that counts refusals too holds as many as came within a window, and grows for them.
 */
class TimeRing {
  private times: Float64Array;
  private head = 0;
  count = 0;

  constructor(size: number) {
    this.times = new Float64Array(size);
  }

  at(i: number): number {
    return this.times[(this.head + i) % this.times.length] as number;
  }

  /** How many of the oldest times are at or before `cutoff`. */
  countUpTo(cutoff: number): number {
    let n = 0;
    while (n < this.count && this.at(n) <= cutoff) n++;
    return n;
  }

  drop(n: number): void {
    this.head = (this.head + n) % this.times.length;
    this.count -= n;
  }

  push(t: number): void {
    if (this.count === this.times.length) {
      const grown = new Float64Array(this.times.length * 2);
      for (let i = 0; i < this.count; i++) grown[i] = this.at(i);
      this.times = grown;
      this.head = 0;
    }
    this.times[(this.head + this.count) % this.times.length] = t;
    this.count++;
  }
}

/**
 * Sliding log: at most `limit` requests in any span of `windowMs` (half-open, as fixed windows are);
 * a request counts until exactly `windowMs` after it. Chosen over Cloudflare's sliding-window counter (a weighted sum of the
 * previous and current fixed windows) because its promise is exact, so a client can be judged
 * against it; its cost is `limit` timestamps per key.
 *
 * `resetMs` is when the newest request ages out: only then is the whole quota back. Requests come
 * back one by one before that, each as the oldest ages out; that is `retryAfterMs` when none is left.
 */
export class SlidingLog extends PerKeyModel<TimeRing> {
  readonly name = 'sliding';
  readonly capacity: number;
  readonly limit: number;
  readonly windowMs: number;
  /**
   * Count refused requests too: each stays in the log a window, so a client that keeps knocking
   * keeps the window full and never gets in. The log then holds every request of the last window
   * (the server's ban bounds how many a client sends inside a Retry-After).
   */
  readonly countRefused;

  constructor(limit: number, windowMs: number, countRefused = false) {
    super();
    this.limit = limit;
    this.windowMs = windowMs;
    this.countRefused = countRefused;
    checkSettings(limit, windowMs);
    this.capacity = limit;
  }

  protected fresh(): TimeRing {
    return new TimeRing(this.limit);
  }

  protected restoredAt(ring: TimeRing): number {
    return ring.count === 0 ? Number.NEGATIVE_INFINITY : ring.at(ring.count - 1) + this.windowMs;
  }

  protected decide(ring: TimeRing, nowMs: number, commit: boolean): Admission {
    // Aged-out times are dropped only when a request is counted: a peek at a later time must not
    // forget requests that still count for an earlier one.
    const aged = ring.countUpTo(nowMs - this.windowMs);
    const inSpan = ring.count - aged;
    const allowed = inSpan < this.limit;
    const counted = allowed || this.countRefused;
    const after = counted ? inSpan + 1 : inSpan;
    const newest = counted ? nowMs : ring.at(ring.count - 1);
    // The next request is admitted once `after - limit + 1` of the counted ones have aged out: the
    // oldest when only admitted ones count, a later one when refusals crowd the log (this request
    // itself, at index inSpan, when it is the one).
    const ageingOut = after - this.limit;
    const retryAfterMs =
      ageingOut < 0
        ? 0
        : ageingOut >= inSpan
          ? this.windowMs
          : ring.at(aged + ageingOut) + this.windowMs - nowMs;
    if (counted && commit) {
      ring.drop(aged);
      ring.push(nowMs);
    }
    return {
      allowed,
      remaining: Math.max(0, this.limit - after),
      resetMs: newest + this.windowMs - nowMs,
      retryAfterMs,
    };
  }
}

/** "Below the limit" for a count that falls continuously: by this much, so that a time exists at which it is. */
const BELOW = 1e-6;

interface CounterState {
  /** The current period's start: a multiple of the window on the clock. */
  start: number;
  previous: number;
  current: number;
}

/**
 * Sliding counter, as several gateways and CDNs compute a rate (Cloudflare's, for one): fixed
 * periods of `windowMs` aligned to the clock, and a request admitted while the current period's
 * count plus the previous one's, weighted by the share of it that the window ending now still
 * covers, is below `limit`. Two counts per key, not a log; it admits a little more or less than a
 * sliding log where the previous period's traffic was uneven, and the plan rate evenly spaced for
 * ever. With `countRefused` every request it sees counts, as a proxy counting requests rather than
 * admissions does: a client that knocks while refused keeps the estimate up and stays refused.
 *
 * `retryAfterMs` is when the estimate has fallen below `limit` (the previous period's weight falls
 * linearly across the current one), `resetMs` when it is 0: the end of the period after the one
 * holding the key's newest counted request.
 */
export class SlidingCounter extends PerKeyModel<CounterState> {
  readonly name = 'sliding-counter';
  readonly capacity: number;
  readonly limit: number;
  readonly windowMs: number;
  readonly countRefused;

  constructor(limit: number, windowMs: number, countRefused = false) {
    super();
    this.limit = limit;
    this.windowMs = windowMs;
    this.countRefused = countRefused;
    checkSettings(limit, windowMs);
    this.capacity = limit;
  }

  protected fresh(): CounterState {
    return { start: Number.NEGATIVE_INFINITY, previous: 0, current: 0 };
  }

  protected restoredAt(s: CounterState): number {
    if (s.current > 0) return s.start + 2 * this.windowMs;
    return s.previous > 0 ? s.start + this.windowMs : Number.NEGATIVE_INFINITY;
  }

  /** The state as the period holding `nowMs` sees it. */
  private rolled(s: CounterState, nowMs: number): CounterState {
    const start = Math.floor(nowMs / this.windowMs) * this.windowMs;
    if (start <= s.start) return s;
    const previous = start - s.start === this.windowMs ? s.current : 0;
    return { start, previous, current: 0 };
  }

  private estimate(s: CounterState, nowMs: number): number {
    return s.previous * (1 - (nowMs - s.start) / this.windowMs) + s.current;
  }

  protected decide(state: CounterState, nowMs: number, commit: boolean): Admission {
    const s = this.rolled(state, nowMs);
    const room = this.limit - BELOW;
    const allowed = this.estimate(s, nowMs) <= room + EPSILON;
    const counted = allowed || this.countRefused;
    const after: CounterState = counted ? { ...s, current: s.current + 1 } : s;
    if (counted && commit) Object.assign(state, after);
    // Requests that would still be admitted now: while the estimate, one more each, stays below.
    const estimate = this.estimate(after, nowMs);
    const remaining = estimate <= room + EPSILON ? Math.floor(room + EPSILON - estimate) + 1 : 0;
    return {
      allowed,
      remaining,
      resetMs: Math.max(0, this.restoredAt(after) - nowMs),
      retryAfterMs: remaining > 0 ? 0 : this.admitsAt(after, room) - nowMs,
    };
  }

  /** When the estimate of `s` (nothing more counted) first falls to `room`. */
  private admitsAt(s: CounterState, room: number): number {
    const W = this.windowMs;
    // Within the current period, the previous one's weight falling.
    if (s.current <= room && s.previous > 0) {
      const at = s.start + W * (1 - (room - s.current) / s.previous);
      if (at < s.start + W) return at;
    }
    // In the next, the current count as the previous one, its weight falling from 1.
    return s.start + W + (s.current > room ? W * (1 - room / s.current) : 0);
  }
}

/**
 * The generic cell rate algorithm (virtual scheduling, ITU-T I.371), as nginx's limit_req with
 * `burst=N nodelay` applies it: one request per emission interval T = windowMs / limit, with a
 * tolerance of `burst` extra requests. The state is one time, the theoretical arrival time (TAT);
 * a request at `now` is admitted when TAT - now <= burst * T, and then moves TAT to
 * max(TAT, now) + T. With burst 0 a request sooner than T after the previous admitted one is refused.
 *
 * `remaining` is how many more would be admitted now, `resetMs` is TAT - now (when the bucket has
 * drained and the whole burst is back), `retryAfterMs` when the next would be admitted.
 */
export class Gcra extends PerKeyModel<{ tat: number }> {
  readonly name: LimiterModelName = 'gcra';
  readonly capacity: number;
  /** The emission interval T, in ms. */
  readonly intervalMs: number;
  /** How far TAT may run ahead of now for a request to be admitted: burst * T. */
  private readonly toleranceMs: number;
  readonly limit: number;
  readonly windowMs: number;
  readonly burst;

  constructor(limit: number, windowMs: number, burst = 0) {
    super();
    this.limit = limit;
    this.windowMs = windowMs;
    this.burst = burst;
    checkSettings(limit, windowMs);
    if (!(Number.isInteger(burst) && burst >= 0)) throw new RangeError('burst must be a whole number >= 0');
    this.capacity = burst + 1;
    this.intervalMs = windowMs / limit;
    this.toleranceMs = burst * this.intervalMs;
  }

  protected fresh() {
    return { tat: Number.NEGATIVE_INFINITY };
  }

  protected restoredAt(state: { tat: number }): number {
    return state.tat;
  }

  protected decide(state: { tat: number }, nowMs: number, commit: boolean): Admission {
    const tat = Math.max(state.tat, nowMs);
    const allowed = tat - nowMs <= this.toleranceMs + EPSILON * this.intervalMs;
    const next = allowed ? tat + this.intervalMs : tat;
    if (allowed && commit) state.tat = next;
    const backlog = next - nowMs;
    // Whole requests that still fit: the bucket holds `capacity`, `backlog / T` of them are taken.
    const remaining = Math.max(0, Math.floor(this.capacity - backlog / this.intervalMs + EPSILON));
    // From the count, not from backlog - tolerance alone, which float error can leave a hair above 0.
    return {
      allowed,
      remaining,
      resetMs: backlog,
      retryAfterMs: remaining > 0 ? 0 : backlog - this.toleranceMs,
    };
  }
}

/**
 * A token bucket of `capacity` tokens (default `limit`) refilled continuously at `limit` per
 * `windowMs`; a request takes one whole token. It is the GCRA above with a tolerance of
 * capacity - 1 requests (ITU-T I.371's equivalence), so it is computed as one: one time per key
 * and no drift from adding fractions of tokens. `remaining` is the whole tokens left, `resetMs`
 * the time until the bucket is full again, `retryAfterMs` until the next whole token.
 */
export class TokenBucket extends Gcra {
  override readonly name: LimiterModelName = 'token-bucket';

  constructor(limit: number, windowMs: number, capacity = limit) {
    if (!(Number.isInteger(capacity) && capacity >= 1))
      throw new RangeError('capacity must be a whole number >= 1');
    super(limit, windowMs, capacity - 1);
  }
}

/** The model named, for one window. */
export function createLimiterModel(name: LimiterModelName, settings: ModelSettings): LimiterModel {
  const { limit, windowMs, burst, countRefused } = settings;
  if (burst !== undefined && !BURST_MODELS.includes(name))
    throw new RangeError(`burst applies to ${BURST_MODELS.join(' and ')} only, not to ${name}`);
  if (countRefused && name !== 'sliding' && name !== 'sliding-counter')
    throw new RangeError(
      `counting refused requests applies to the sliding log and counter only, not to ${name}`,
    );
  switch (name) {
    case 'fixed':
      return new FixedWindow(limit, windowMs);
    case 'sliding':
      return new SlidingLog(limit, windowMs, countRefused ?? false);
    case 'sliding-counter':
      return new SlidingCounter(limit, windowMs, countRefused ?? false);
    case 'token-bucket':
      return new TokenBucket(limit, windowMs, burst ?? limit);
    case 'gcra':
      return new Gcra(limit, windowMs, burst ?? 0);
  }
}
