import { type Histogram, newHistogram } from './histogram.ts';

/**
 * How far the target's own answers stray above its fastest, so that a delay is claimed as a
 * limiter's only when it stands clear of that: `margin` is the hold (latency beyond the operation's
 * fastest answer) below which an answer is the service's jitter, not a limiter's wait.
 *
 * The spread is the p99 of the holds of answers that were under the margin (and under 50 ms) when
 * they came: a real limiter's waits stand above it and never feed it, so that a queue's long holds
 * cannot raise the bar they are judged by (were they counted, a few held answers missed would push
 * the p99 up, and the next ones would be missed too). A service's own tail, under load, does feed it
 * and raises the bar with it. The pet store server on loopback, `capacity` of its four plans on a
 * loaded 2-core machine: service time p99 8.4 ms, the longest 34 ms; a queue answering one release
 * after another holds answers whole intervals.
 */

/** Below this, a hold is a busy machine's timers and scheduling, whatever the spread says. */
export const HOLD_MARGIN_FLOOR_MS = 10;
/** A limiter's wait is at least this many times the service's own p99 spread. */
export const HOLD_MARGIN_MULTIPLE = 3;
/**
 * Holds from this up never enter the spread, so that the margin stays under three times it (150
 * ms): a queue filled slowly, over and over, holds answers for every length from 0 up, and those
 * just under the margin would otherwise raise it past the rest, a step at a time.
 */
const SPREAD_CAP_MS = 50;
/** The p99 is read again after this many holds: a percentile of a histogram costs a walk of it. */
const REREAD_EVERY = 64;
/**
 * Holds seen before the p99 is read at all: of fewer, it is the largest, and a run's first answers
 * (connections opened, code compiled) would set the bar.
 */
const LEAST_HOLDS = 128;

export class ServiceSpread {
  /** Holds in µs (never 0: the histogram's lowest value is 1). */
  readonly #holds: Histogram = newHistogram();
  #sinceRead = 0;
  #marginMs = HOLD_MARGIN_FLOOR_MS;

  /** The hold, ms, below which an answer is the service's own: max(floor, multiple × p99 spread). */
  get marginMs(): number {
    return this.#marginMs;
  }

  /** An answer's hold, ms: taken into the spread when under the margin. */
  observe(holdMs: number): void {
    if (holdMs >= Math.min(this.#marginMs, SPREAD_CAP_MS)) return;
    this.#holds.recordValue(Math.max(1, Math.round(holdMs * 1000)));
    if (++this.#sinceRead < REREAD_EVERY || this.#holds.totalCount < LEAST_HOLDS) return;
    this.#sinceRead = 0;
    const p99 = this.#holds.getValueAtPercentile(99) / 1000;
    this.#marginMs = Math.max(HOLD_MARGIN_FLOOR_MS, HOLD_MARGIN_MULTIPLE * p99);
  }
}
