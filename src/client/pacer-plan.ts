import { type LimiterKind, pacedByGap } from '../api/limiter-kinds.ts';
import { type RateWindow, shortestWindow } from '../api/plans.ts';
import { type SpacingStart, withMargin } from './adaptive-spacing.ts';
import type { LogWindow } from './quota-log.ts';
import type { QuotaSpec } from './quota-store.ts';

export interface PacerOptions {
  /** Plan windows, already time-scaled to the target's clock. */
  windows: readonly RateWindow[];
  /**
   * false: no pacing at all (raw mode); only pauses after a 429 and the ban guard remain.
   * Raw mode exists to exceed a quota on purpose and measure the server's limiter.
   */
  enforce: boolean;
  /**
   * Margin added to every window span for arrival jitter; default 0.5% of the shortest window,
   * 5..250 ms, and a gap at least 1% (10 ms at most) over the interval where the limiter may count
   * gaps. Given, it is the whole margin.
   */
  guardMs?: number;
  /**
   * How many requests beyond the server's reported budget may be in flight at once. Each one is a
   * likely 429, and the seed's ban punishes repeated requests after a 429: 2 keeps far below our
   * reference server's 5 while still letting raw mode see the limiter work.
   */
  maxOvershoot?: number;
  /**
   * The server's limiter when known (`--limiter`): a GCRA or token bucket gets the plan's spacing
   * as a minimum gap between sends from the start; windows learn no gap. Unset: learned from 429s.
   */
  limiter?: LimiterKind;
  /** `--limiter concurrency:N`: requests of the key in flight at most, from the start. */
  maxInFlight?: number;
}

/**
 * What a send's arrival may lag its pacing decision by, as the target's clock sees it: an event loop
 * busy with other users' answers, the socket write behind it. nginx at 60 r/m saw two sends 1004 ms
 * apart by the client's clock 999 ms apart, beside two busy processes. 10 ms, at most 1% of the
 * interval: a 1% lower rate where the limiter may count gaps, for no refusal of its first pair.
 */
const ARRIVAL_JITTER_MS = 10;
const ARRIVAL_JITTER_SHARE = 0.01;
/**
 * Below this allowance (an interval under 100 ms) a timer's own granularity is more than the
 * allowance: no pacing keeps such a GCRA without burst from a refusal, and late timers are made up
 * so that the rate holds (at 50 a second on a loaded machine, not made up, a run used 25% of its plan).
 */
const TIMER_GRANULARITY_MS = 1;

/**
 * What a Pacer derives from its options alone: the same for every key of a plan, so that a tenant mix
 * of thousands of keys builds it once per plan and each key's pacer keeps only its own state.
 */
export class PacerPlan {
  /** Each window's limit and span (window + guard) for the sliding logs; none in raw mode. */
  readonly logWindows: readonly LogWindow[];
  readonly spacingMs: number;
  readonly maxOvershoot: number;
  readonly windowMsByLimit: ReadonlyMap<number, number>;
  readonly shortestLimit: number;
  readonly shortestMs: number;
  readonly spec: QuotaSpec | undefined;
  /** The plan's shortest window over its limit, whether pacing keeps it or not. */
  readonly intervalMs: number;
  /**
   * The closest two sends may come, where the limiter may space sends (not told, or told a GCRA,
   * bucket or sliding counter): the plan's interval and what arrival jitter may take from a gap, and
   * no make-up for a late send; 0 where a window alone counts them, or the interval is too short for
   * any gap to be kept to the millisecond.
   */
  readonly minGapMs: number;
  /**
   * Raw mode's gap while a run prepares (setup, teardown): the plan's interval and the jitter's
   * allowance. They prepare data, not load: a setup's POST refused by a limiter's bare 503 (nginx
   * as it ships) is not retried, and the run could not start.
   */
  readonly preparingGapMs: number;
  readonly spacingStart: SpacingStart;
  readonly options: PacerOptions;

  constructor(options: PacerOptions) {
    this.options = options;
    const shortest = shortestWindow(options.windows);
    const guard = options.guardMs ?? Math.min(250, Math.max(5, (shortest?.seconds ?? 0) * 1000 * 0.005));
    this.logWindows = options.enforce
      ? options.windows.map((w) => ({ limit: w.limit, spanMs: w.seconds * 1000 + guard }))
      : [];
    this.spacingMs = options.enforce && shortest ? (shortest.seconds * 1000 + guard) / shortest.limit : 0;
    this.intervalMs = shortest ? (shortest.seconds * 1000) / shortest.limit : Number.POSITIVE_INFINITY;
    const given = options.limiter;
    const jitterMs = Math.min(ARRIVAL_JITTER_MS, this.intervalMs * ARRIVAL_JITTER_SHARE);
    this.minGapMs =
      this.spacingMs > 0 && (given === undefined || pacedByGap(given)) && jitterMs >= TIMER_GRANULARITY_MS
        ? Math.max(this.spacingMs, this.intervalMs + (options.guardMs === undefined ? jitterMs : 0))
        : 0;
    this.preparingGapMs =
      !options.enforce && Number.isFinite(this.intervalMs) ? this.intervalMs + jitterMs : 0;
    this.spacingStart = {
      floorMs:
        given && pacedByGap(given) && shortest ? withMargin((shortest.seconds * 1000) / shortest.limit) : 0,
      learnFloor: given === undefined,
      ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
      learnConcurrency: given === undefined || given === 'concurrency',
    };
    this.maxOvershoot = options.maxOvershoot ?? 2;
    this.windowMsByLimit = new Map(options.windows.map((w) => [w.limit, w.seconds * 1000]));
    this.shortestLimit = shortest?.limit ?? Number.POSITIVE_INFINITY;
    this.shortestMs = (shortest?.seconds ?? 1) * 1000;
    // Generators in other processes (or on other machines) wake late under load, and their sends
    // reach the server in another order than their slots: a shared quota keeps a wider guard, 2% of
    // the shortest window between the local guard and 250 ms (1.2 s of a 60 s window costs 0.4%).
    const sharedGuard = Math.max(guard, Math.min(250, this.shortestMs * 0.02));
    const sharedSpacing =
      options.enforce && shortest ? (shortest.seconds * 1000 + sharedGuard) / shortest.limit : 0;
    this.spec = options.enforce
      ? {
          spacingMs: sharedSpacing,
          windows: options.windows.map((w) => ({ limit: w.limit, spanMs: w.seconds * 1000 + sharedGuard })),
          lateMs: sharedGuard / 2,
        }
      : undefined;
  }
}
