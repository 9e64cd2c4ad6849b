import { now } from './clock.ts';
import { type QuotaLog, quotaLog } from './quota-log.ts';
import type { StoreWatch } from './store-outage.ts';

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
  /** A store that can go away and come back (Redis): its outages, waited for by every send. */
  readonly watch?: StoreWatch;
  /**
   * After it came back as another server: makes window `index` of the key hold at least `count`
   * sends that count for `forMs` more (what the target said it still counts).
   */
  reseed?(key: string, spec: QuotaSpec, index: number, count: number, forMs: number): Promise<void>;
  /** Sends that left without the store (`agoMs` before now), added to every window's log. */
  tell?(key: string, spec: QuotaSpec, agoMs: readonly number[]): Promise<void>;
  /** Whether the store holds any reservation state of the key (a restarted one holds none). */
  knows?(key: string): Promise<boolean>;
}

interface KeyState {
  next: number;
  pausedUntil: number;
  /** Per window of the spec, as the local pacer keeps them: a ring of `limit` times, or buckets. */
  logs: QuotaLog[];
  /** The spec the logs were built for, by value: every generator sends its own copy. */
  signature: string;
}

const signatures = new WeakMap<QuotaSpec, string>();
function signatureOf(spec: QuotaSpec): string {
  let signature = signatures.get(spec);
  if (signature === undefined) {
    signature = `${spec.spacingMs}|${spec.windows.map((w) => `${w.limit}/${w.spanMs}`).join(',')}`;
    signatures.set(spec, signature);
  }
  return signature;
}

/**
 * The reservation rule (the Lua script of the Redis store runs the same): the later of now, the
 * spacing grid's next slot and the pause, and for every window no earlier than one more send keeps
 * it. Reservations only move forward, so each window's log stays in order.
 */
export function reserveSlot(state: KeyState, spec: QuotaSpec, t: number): number {
  const signature = signatureOf(spec);
  if (state.signature !== signature) {
    // A key's spec is fixed for a run; another (another run in this process) starts fresh logs.
    state.signature = signature;
    state.logs = spec.windows.map((w) => quotaLog(w.limit, w.spanMs));
  }
  let at = Math.max(t, state.next, state.pausedUntil);
  for (const log of state.logs) at = Math.max(at, log.earliest());
  // On a grid, as the local pacer's: see Pacer.sent.
  state.next = (at - state.next > spec.spacingMs / 2 ? at : state.next) + spec.spacingMs;
  for (const log of state.logs) log.add(at);
  return at;
}

/** The store of one process: the main thread's, for the worker threads of a run. */
export class MemoryQuotaStore implements QuotaStore {
  private readonly keys = new Map<string, KeyState>();

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { next: Number.NEGATIVE_INFINITY, pausedUntil: 0, logs: [], signature: '' };
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
