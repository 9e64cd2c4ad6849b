import { Gcra } from '../../api/limiter-models.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { RateSearch } from '../../result/capacity-types.ts';
import { admitted, type ProbeClient, type ProbeReply, type Shot } from '../probe-client.ts';

/**
 * The emission interval of a limiter that refills continuously, or says nothing, found from the
 * answers alone. Every limiter of interest admits requests as a GCRA does: a token bucket of size C
 * is a GCRA of burst C - 1 (ITU-T I.371), and after a burst from rest a window too lets the next
 * request in only after its interval (there: its window). So each candidate (interval T, burst b)
 * is the GCRA of src/api/limiter-models.ts replaying every request sent since the limiter's rest,
 * and an answer rules out the candidates that would have answered otherwise. The next request goes
 * when the middle candidate would admit it: whatever the answer, half of them fall.
 */

/**
 * Candidate intervals are 2% apart at first, from 1 ms to four windows; once a few are left, 0.25%
 * apart around them, well inside the 2% the rate is wanted to. Each candidate replays every request
 * (a burst may be thousands), so the fine grid is laid only where the answers left room.
 */
const COARSE_RATIO = 1.02;
const FINE_RATIO = 1.0025;
/** The fine grid is laid once the coarse candidates left span this many intervals or fewer. */
const REFINE_AT = 6;
const MIN_INTERVAL_MS = 1;
/** A candidate a request more wrong than the best is dropped: it can only fall further behind. */
const MISS_SLACK = 1;
/** The search stops once the intervals left are within 1.5% of each other (the rate then to ±0.75%). */
export const TARGET_WIDTH = 0.015;
/** At most this many requests, and this many of them refused, from the burst's refusal to the end. */
export const SEARCH_MAX_PROBES = 30;
export const SEARCH_MAX_REFUSED = 6;
/** The rate stage's time: this many plan intervals, and at least 10 s. */
const RATE_STAGE_INTERVALS = 40;
const RATE_STAGE_MIN_MS = 10_000;
/** Probes go first just above and just below the plan's interval: a limiter usually keeps its plan. */
const PRIOR = [1.05, 0.95];
const KEY = 'probe';

class Candidate {
  misses = 0;
  private readonly model: Gcra;
  readonly intervalMs: number;
  readonly burst: number;

  constructor(intervalMs: number, burst: number) {
    this.intervalMs = intervalMs;
    this.burst = burst;
    this.model = new Gcra(1, intervalMs, burst);
  }

  observe(at: number, admittedThen: boolean): void {
    if (this.model.admit(KEY, at).allowed !== admittedThen) this.misses++;
  }

  /** When, from `from` on, this limiter would admit the next request. */
  admitsFrom(from: number): number {
    const a = this.model.peek(KEY, from);
    return a.allowed ? from : from + a.retryAfterMs;
  }
}

/** Every (interval, burst) still in agreement with the answers. */
export class IntervalCandidates {
  private list: Candidate[] = [];
  private fed = 0;
  private fine = false;
  private readonly asked = new Set<number>();
  /** Those a burst of `admittedAtOnce` from rest allows (one of it may be a refill during the burst). */
  private readonly bursts: number[];

  constructor(maxIntervalMs: number, admittedAtOnce: number) {
    this.bursts = [admittedAtOnce - 1, admittedAtOnce - 2].filter((b) => b >= 0);
    this.lay(MIN_INTERVAL_MS, maxIntervalMs, COARSE_RATIO);
  }

  private lay(low: number, high: number, ratio: number): void {
    this.list = [];
    this.fed = 0;
    for (let t = low; t <= high; t *= ratio) for (const b of this.bursts) this.list.push(new Candidate(t, b));
  }

  /** Replays the shots not seen yet, then keeps the candidates that missed least. */
  feed(shots: readonly Shot[]): void {
    for (; this.fed < shots.length; this.fed++) {
      const shot = shots[this.fed] as Shot;
      for (const c of this.list) c.observe(shot.at, shot.admitted);
    }
    const least = Math.min(...this.list.map((c) => c.misses));
    this.list = this.list.filter((c) => c.misses <= least + MISS_SLACK);
    const best = this.best();
    const [first, last] = [best[0], best[best.length - 1]];
    if (this.fine || !first || !last || last.intervalMs / first.intervalMs > COARSE_RATIO ** REFINE_AT)
      return;
    this.fine = true;
    this.lay(first.intervalMs / COARSE_RATIO, last.intervalMs * COARSE_RATIO, FINE_RATIO);
    this.feed(shots);
  }

  /** The candidates that agree best, by interval. */
  best(): Candidate[] {
    const least = Math.min(...this.list.map((c) => c.misses));
    return this.list.filter((c) => c.misses === least).sort((a, b) => a.intervalMs - b.intervalMs);
  }

  range(): { low: number; high: number } | null {
    const best = this.best();
    const [first, last] = [best[0], best[best.length - 1]];
    return first && last ? { low: first.intervalMs, high: last.intervalMs } : null;
  }

  /** high / low - 1: how far apart the intervals left are (unknown until the fine grid is laid). */
  width(): number {
    const r = this.range();
    return r && this.fine ? r.high / r.low - 1 : Number.POSITIVE_INFINITY;
  }

  /** The interval's best guess (the geometric middle) and the burst most candidates agree on. */
  estimate(): { intervalMs: number; burst: number } | null {
    const r = this.range();
    if (!r) return null;
    const votes = new Map<number, number>();
    for (const c of this.best()) votes.set(c.burst, (votes.get(c.burst) ?? 0) + 1);
    const burst = [...votes].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 0;
    return { intervalMs: Math.sqrt(r.low * r.high), burst };
  }

  /**
   * When to send the next request: when the chosen candidate would admit it, never before
   * `earliest`. Chosen: the plan's interval just above, then just below, while it is still in
   * doubt; else the middle one.
   */
  nextAt(earliest: number, planIntervalMs: number): number {
    const best = this.best();
    if (best.length === 0) return earliest;
    // A guess is asked once, and only while candidates lie on both sides of it: else it tells nothing.
    const inside = (i: number) => i > 0 && i < best.length - 1;
    let chosen = best[Math.floor(best.length / 2)] as Candidate;
    for (const factor of PRIOR) {
      if (this.asked.has(factor)) continue;
      const i = best.findIndex((c) => c.intervalMs >= factor * planIntervalMs);
      if (!inside(i)) continue;
      this.asked.add(factor);
      chosen = best[i] as Candidate;
      break;
    }
    return chosen.admitsFrom(earliest);
  }
}

export interface SearchState {
  candidates: IntervalCandidates;
  planIntervalMs: number;
  probes: number;
  refused: number;
  startedAt: number;
  /** When the search last sent (its duration ends there, not when the report is written). */
  endedAt: number;
  nextIndex: number;
}

export interface SearchLimits {
  /** Stop once this answer has come (the quota's return), or once the candidates agree (undefined). */
  until?: (r: ProbeReply) => boolean;
  deadline: number;
  /** Stop when a refusal announces a wait the search must not sit out (a spent day, a ban). */
  stalled: () => boolean;
  signal?: AbortSignal;
}

/** Requests one at a time, each when the middle candidate would admit it, until `limits` say stop. */
export async function search(
  client: ProbeClient,
  state: SearchState,
  limits: SearchLimits,
): Promise<ProbeReply | undefined> {
  const shots = client.shots as Shot[];
  for (;;) {
    state.candidates.feed(shots);
    if (limits.until === undefined && state.candidates.width() <= TARGET_WIDTH) return undefined;
    if (state.probes >= SEARCH_MAX_PROBES || state.refused >= SEARCH_MAX_REFUSED) return undefined;
    if (limits.signal?.aborted || limits.stalled()) return undefined;
    const earliest = Math.max(now(), client.pauseUntil + 1);
    const at = state.candidates.nextAt(earliest, state.planIntervalMs);
    if (at > limits.deadline) return undefined;
    await sleepUntil(at, limits.signal);
    if (limits.signal?.aborted) return undefined;
    const r = await client.request(state.nextIndex++);
    state.probes++;
    state.endedAt = now();
    if (!admitted(r)) state.refused++;
    if (limits.until?.(r)) {
      state.candidates.feed(shots);
      return r;
    }
  }
}

/**
 * The longest the return and the rate search may add against a limiter that tells no wait (at most
 * three windows to see the quota back, then the rate stage), for saying so before starting.
 */
export function rateSearchBoundMs(windowMs: number, limit: number): number {
  return 3 * windowMs + rateStageBudgetMs(windowMs / limit);
}

/** How long the rate stage may take at most: 40 of the plan's intervals, at least 10 s. */
export function rateStageBudgetMs(planIntervalMs: number): number {
  return Math.max(RATE_STAGE_MIN_MS, RATE_STAGE_INTERVALS * planIntervalMs);
}

export function searchSummary(state: SearchState): RateSearch {
  const r = state.candidates.range();
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    probes: state.probes,
    refused: state.refused,
    intervalMs: r ? { low: round(r.low), high: round(r.high) } : null,
    durationMs: Math.round(state.endedAt - state.startedAt),
  };
}
