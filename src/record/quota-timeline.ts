import type { RateLimitView } from '../api/rate-limit-dialect.ts';
import { keepsAway } from '../api/responses.ts';
import { parseRetryAfter } from '../api/retry-after.ts';
import type { AttemptRecord } from './attempt.ts';

/** One second of one key: its traffic and the quota its responses announced. */
export interface QuotaPoint {
  /** Seconds since the run started, as the timeline counts them. */
  t: number;
  /** Responses of the key received in this second, 429s included. */
  requests: number;
  rateLimited: number;
  /** The lowest Remaining announced in this second (absent: no response of it announced one). */
  remainingMin?: number;
  /** The Remaining of the last response of this second that announced one. */
  remainingLast?: number;
  /** A new window was seen in this second: Remaining jumped up, or the reset announced before it passed. */
  reset?: true;
}

/** What set the end of a pause: a valid Retry-After, the reset the quota fields announced, or backoff. */
export type PauseCause = 'retry-after' | 'reset' | 'backoff';

/** Pauses the client kept after 429s, overlapping ones joined into one band. */
export interface PauseBand {
  /** Seconds since the start at which the first 429 of the band arrived. */
  from: number;
  /** Seconds since the start at which the last of its pauses ended (may lie past the run's end). */
  until: number;
  /** What told the pause that ends the band. */
  by: PauseCause;
  /** 429s whose pauses the band joins. */
  rateLimited: number;
}

/** One key's quota over the run (the key's label: its plan, never the key). */
export interface KeyQuota {
  key: string;
  /** The highest limit announced (a server announces the window closest to running out). */
  limit?: number;
  points: QuotaPoint[];
  pauses: PauseBand[];
  /** Bands not kept beyond MAX_PAUSE_BANDS (the earliest are kept). */
  droppedPauses?: number;
}

/** Enough to draw any run; a run of millions of 429s keeps the earliest and counts the rest. */
export const MAX_PAUSE_BANDS = 1000;

/**
 * A tenant mix keeps the series of the first key of each tier (`pro#1`, `abusive#1`), at most this
 * many: 10,000 keys must not make 10,000 series, and the first key of a tier shows how its keys fare.
 */
export const MAX_TENANT_SERIES = 16;

/** NaN stands for "none yet" so that every bin keeps one shape and comparisons with it are false. */
interface Bin {
  t: number;
  requests: number;
  rateLimited: number;
  remainingMin: number;
  remainingLast: number;
  reset: boolean;
}

interface Band {
  from: number;
  until: number;
  by: PauseCause;
  rateLimited: number;
}

class KeyState {
  readonly bins = new Map<number, Bin>();
  current: Bin = { t: -1, requests: 0, rateLimited: 0, remainingMin: NaN, remainingLast: NaN, reset: false };
  limit = NaN;
  lastRemaining = NaN;
  /** Epoch ms of the reset the previous response announced. */
  lastResetAt = NaN;
  readonly bands: Band[] = [];
  dropped = 0;
  /** End of the latest band not kept, so that pauses overlapping it are not counted again. */
  droppedUntil = Number.NEGATIVE_INFINITY;

  bin(t: number): Bin {
    let b = this.bins.get(t);
    if (!b) {
      b = { t, requests: 0, rateLimited: 0, remainingMin: NaN, remainingLast: NaN, reset: false };
      this.bins.set(t, b);
    }
    this.current = b;
    return b;
  }
}

/**
 * Per key and per second, the Remaining the server announced and the traffic; and the pauses the
 * client kept after 429s. Memory grows with seconds and keys, not requests: an attempt costs a few
 * comparisons and allocates nothing (a bin per second, a band per separate pause, at most
 * MAX_PAUSE_BANDS of them).
 */
export class QuotaTimeline {
  private readonly keys = new Map<string, KeyState>();
  private lastLabel: string | undefined;
  private lastKey: KeyState | undefined;
  private tenantSeries = 0;
  private readonly startedAt: number;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  /** `view`: the response's quota fields as read for it (absent for a transport error). */
  add(a: AttemptRecord, view: RateLimitView | undefined): void {
    // A tenant other than the first of its tier has no series: one comparison, no lookup.
    if (a.tenant !== undefined && a.tenant.ordinal !== 1) return;
    const k = this.key(a.keyLabel, a.tenant !== undefined);
    if (k === undefined) return;
    const t = Math.max(0, Math.floor((a.receivedAt - this.startedAt) / 1000));
    const b = t === k.current.t ? k.current : k.bin(t);
    b.requests++;
    if (a.kind === 'refused') b.rateLimited++;
    if (keepsAway(a.kind) && a.pauseUntil !== undefined) addPause(k, a, view);
    const remaining = view?.remaining;
    if (remaining === undefined) return;
    const limit = view?.limit ?? k.limit;
    if (!(limit <= k.limit)) k.limit = limit;
    // A trickle back (a sliding log, a token bucket, responses out of order) is no new window: a
    // jump of more than a quarter of the limit is, as is a response past the reset announced before
    // that tells no less (a later one of the same window tells less).
    const jump = limit > 0 ? limit / 4 : 2;
    if (remaining - k.lastRemaining > jump || (a.receivedAt >= k.lastResetAt && remaining >= k.lastRemaining))
      b.reset = true;
    k.lastRemaining = remaining;
    const resetSeconds = view?.resetSeconds;
    k.lastResetAt = resetSeconds === undefined ? NaN : a.receivedAt + resetSeconds * 1000;
    if (!(remaining >= b.remainingMin)) b.remainingMin = remaining;
    b.remainingLast = remaining;
  }

  /**
   * Each key's last announced Remaining (keys that announced one): what live metrics push, at a
   * cost that grows with keys, not with the seconds of a long run as a snapshot's does.
   */
  lastRemaining(): { key: string; remaining: number }[] {
    const out: { key: string; remaining: number }[] = [];
    for (const [key, k] of this.keys)
      if (!Number.isNaN(k.lastRemaining)) out.push({ key, remaining: k.lastRemaining });
    return out;
  }

  private key(label: string, tenant: boolean): KeyState | undefined {
    if (label === this.lastLabel && this.lastKey) return this.lastKey;
    let k = this.keys.get(label);
    if (!k) {
      if (tenant && this.tenantSeries >= MAX_TENANT_SERIES) return undefined;
      if (tenant) this.tenantSeries++;
      k = new KeyState();
      this.keys.set(label, k);
    }
    this.lastLabel = label;
    this.lastKey = k;
    return k;
  }

  snapshot(): KeyQuota[] {
    const seconds = (ms: number) => Math.max(0, Math.round(ms - this.startedAt) / 1000);
    return [...this.keys].map(([key, k]) => ({
      key,
      ...(!Number.isNaN(k.limit) ? { limit: k.limit } : {}),
      points: [...k.bins.values()].sort((x, y) => x.t - y.t).map(pointOf),
      pauses: k.bands.map((band) => ({ ...band, from: seconds(band.from), until: seconds(band.until) })),
      ...(k.dropped > 0 ? { droppedPauses: k.dropped } : {}),
    }));
  }
}

function pointOf(b: Bin): QuotaPoint {
  return {
    t: b.t,
    requests: b.requests,
    rateLimited: b.rateLimited,
    ...(!Number.isNaN(b.remainingMin) ? { remainingMin: b.remainingMin } : {}),
    ...(!Number.isNaN(b.remainingLast) ? { remainingLast: b.remainingLast } : {}),
    ...(b.reset ? { reset: true as const } : {}),
  };
}

/** As the client chose: a valid Retry-After first, then a reset still to come, else its backoff. */
function pauseCause(a: AttemptRecord, view: RateLimitView | undefined): PauseCause {
  if (parseRetryAfter(a.headers?.['retry-after']) !== undefined) return 'retry-after';
  return view?.resetSeconds !== undefined && view.resetSeconds > 0 ? 'reset' : 'backoff';
}

/** 429s arrive in receive order, so a pause can only overlap the latest band. */
function addPause(k: KeyState, a: AttemptRecord, view: RateLimitView | undefined): void {
  const until = a.pauseUntil as number;
  if (!Number.isFinite(until)) return;
  const from = a.receivedAt;
  const last = k.bands[k.bands.length - 1];
  if (last && from <= last.until) {
    last.rateLimited++;
    if (until > last.until) {
      last.until = until;
      last.by = pauseCause(a, view);
    }
    return;
  }
  if (k.bands.length < MAX_PAUSE_BANDS) {
    k.bands.push({ from, until, by: pauseCause(a, view), rateLimited: 1 });
    return;
  }
  if (from > k.droppedUntil) k.dropped++;
  if (until > k.droppedUntil) k.droppedUntil = until;
}

/**
 * Bands on one clock joined where they overlap, the earliest MAX_PAUSE_BANDS kept: how a merge
 * combines the pauses of several parts. `dropped` counts the bands not kept.
 */
export function unionPauses(bands: PauseBand[]): { pauses: PauseBand[]; dropped: number } {
  const sorted = [...bands].sort((x, y) => x.from - y.from);
  const joined: PauseBand[] = [];
  for (const band of sorted) {
    const last = joined[joined.length - 1];
    if (last && band.from <= last.until) {
      last.rateLimited += band.rateLimited;
      if (band.until > last.until) {
        last.until = band.until;
        last.by = band.by;
      }
    } else joined.push({ ...band });
  }
  return { pauses: joined.slice(0, MAX_PAUSE_BANDS), dropped: Math.max(0, joined.length - MAX_PAUSE_BANDS) };
}
