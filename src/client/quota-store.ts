import { now } from './clock.ts';

/** The quota one key's sends share, as every generator of it must see it. */
export interface QuotaSpec {
  /** Even spacing of sends over the shortest window (window + guard) / limit, ms. */
  spacingMs: number;
  /** Each window as a sliding span: at most `limit` sends in any `spanMs` (window + guard). */
  windows: readonly { limit: number; spanMs: number }[];
  /**
   * A send that leaves later than its slot by more than this gives the slot up and reserves anew:
   * a late send could land in a server window whose slots are all taken (half the guard).
   */
  lateMs: number;
}

/**
 * Where a key's pacing state and its 429 pauses live when several generators share the key: the
 * worker threads of one run, or processes on several machines (Redis). Each send reserves its slot
 * here, so that all of them together keep the plan's spacing and windows, and a 429 seen by one
 * pauses every one. Times are the store's own clock: each answer is a delay, never a timestamp,
 * so that generators on machines with different clocks agree.
 */
export interface QuotaStore {
  /** Reserves the key's next send: how long (ms) to wait before it may leave. */
  reserve(key: string, spec: QuotaSpec): Promise<number>;
  /** How long (ms) the key's shared pause still runs; 0 when none. */
  pauseLeft(key: string): Promise<number>;
  /** Pauses the key for every generator for `ms` from now; never shortens a longer pause. */
  pause(key: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

interface KeyState {
  next: number;
  pausedUntil: number;
  /** Per window of the spec, the reserved send times within its span, oldest first. */
  logs: number[][];
}

/**
 * The reservation rule, shared by the stores: the later of now, the spacing grid's next slot and the
 * pause; then for every window whose span already holds `limit` sends, no earlier than the oldest of
 * the last `limit` plus the span. Reservations only move forward, so each log stays sorted.
 */
export function reserveSlot(state: KeyState, spec: QuotaSpec, t: number): number {
  let at = Math.max(t, state.next, state.pausedUntil);
  spec.windows.forEach((w, i) => {
    const log = (state.logs[i] ??= []);
    let drop = 0;
    while (drop < log.length && (log[drop] as number) <= at - w.spanMs) drop++;
    if (drop > 0) log.splice(0, drop);
    if (log.length >= w.limit) at = Math.max(at, (log[log.length - w.limit] as number) + w.spanMs);
  });
  // On a grid: a slot taken late does not push the next one later (as the local pacer's grid).
  state.next = Math.max(state.next, at - spec.spacingMs) + spec.spacingMs;
  spec.windows.forEach((_, i) => {
    state.logs[i]?.push(at);
  });
  return at;
}

/** The store of one process: the main thread's, for the worker threads of a run. */
export class MemoryQuotaStore implements QuotaStore {
  private readonly keys = new Map<string, KeyState>();

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { next: Number.NEGATIVE_INFINITY, pausedUntil: 0, logs: [] };
      this.keys.set(key, s);
    }
    return s;
  }

  async reserve(key: string, spec: QuotaSpec): Promise<number> {
    const t = now();
    return reserveSlot(this.state(key), spec, t) - t;
  }

  async pauseLeft(key: string): Promise<number> {
    return Math.max(0, this.state(key).pausedUntil - now());
  }

  async pause(key: string, ms: number): Promise<void> {
    const s = this.state(key);
    s.pausedUntil = Math.max(s.pausedUntil, now() + ms);
  }

  async close(): Promise<void> {}
}
