import type { LimiterReport, SlowDown } from '../../result/capacity-types.ts';
import type { ProbeReply } from '../probe-client.ts';

/**
 * A limiter that delays instead of refusing (express-slow-down: each request past `delayAfter` in
 * its window is held `(hits - delayAfter) * step` ms). Requests sent one after another from rest
 * show it as answers that take longer by the same step each, past a threshold; a server that is
 * merely slow, or slow at random, shows no such line.
 */

/** Delayed answers measured before the probe stops: the delay grows, and more teach nothing. */
export const SLOW_DOWN_POINTS = 4;
/** The least growth per request taken for a delay (loopback jitter is a few ms). */
const MIN_STEP_MS = 10;
/** How far a delayed answer may stray from the line, ms or a share of the step. */
const FIT_SLACK_MS = 15;
const FIT_SLACK_SHARE = 0.3;

export interface SlowDownFit extends SlowDown {
  /** Delayed answers the line was fitted to. */
  points: number;
  /** The longest delay seen, ms (over the fastest answer). */
  longestMs: number;
}

/**
 * The threshold k and the step d for which `latency[i] - fastest` is 0 up to request k and
 * (i - k) * d past it, fitted by least squares over every k; null when no line fits the growth
 * (fewer than 3 requests past the threshold, a step under 10 ms, or answers off the line).
 */
export function fitSlowDown(latenciesMs: readonly number[]): SlowDownFit | null {
  const n = latenciesMs.length;
  if (n < 3) return null;
  const fastest = Math.min(...latenciesMs);
  const excess = latenciesMs.map((l) => l - fastest);
  let best: { k: number; d: number; cost: number } | undefined;
  for (let k = 0; k <= n - 3; k++) {
    let xy = 0;
    let xx = 0;
    for (let i = k; i < n; i++) {
      const x = i + 1 - k;
      xy += x * (excess[i] as number);
      xx += x * x;
    }
    const d = xy / xx;
    let cost = 0;
    for (let i = 0; i < n; i++) {
      const predicted = i < k ? 0 : (i + 1 - k) * d;
      cost += ((excess[i] as number) - predicted) ** 2;
    }
    if (!best || cost < best.cost) best = { k, d, cost };
  }
  if (!best || best.d < MIN_STEP_MS) return null;
  const { k, d } = best;
  const slack = Math.max(FIT_SLACK_MS, FIT_SLACK_SHARE * d);
  // The first answer of a run may be slow for reasons of our own (a connection, code compiled), and
  // so may one in eight of the rest on a busy machine (a request of a burst that opened a connection).
  let off = 0;
  for (let i = 1; i < n; i++) {
    const predicted = i < k ? 0 : (i + 1 - k) * d;
    if (Math.abs((excess[i] as number) - predicted) > slack && ++off > Math.floor((n - 1) / 8)) return null;
  }
  return {
    threshold: k,
    delayPerRequestMs: Math.round(d * 10) / 10,
    points: n - k,
    longestMs: Math.round(Math.max(...excess)),
  };
}

/**
 * Watches the answers of requests sent one after another (the exhaust phase told no Remaining),
 * and says when to stop: once the growth is measured, or once one answer was held so long that
 * waiting on more would not be bounded.
 */
export class SlowDownWatch {
  private readonly latencies: number[] = [];
  /** Why the probe stopped sending without a 429, when it did. */
  stoppedBecause: string | undefined;
  /** The longest an answer may be held before the probe stops, ms. */
  private readonly maxDelayMs: number;

  constructor(maxDelayMs: number) {
    this.maxDelayMs = maxDelayMs;
  }

  /** True: send no more. Answers must come in send order (one request at a time). */
  observe = (r: ProbeReply): boolean => {
    // A told Remaining lets the gate send several at once: their times are no longer one line.
    if (r.status === 0 || r.rateLimit.remaining !== undefined) return false;
    // From the write, not the call: a request of a burst that opened a connection, or waited for a
    // busy event loop before it left, would otherwise stray from the delay's line by that much.
    this.latencies.push(r.receivedAt - (r.writtenAt ?? r.sentAt));
    const fit = fitSlowDown(this.latencies);
    if (fit && fit.points >= SLOW_DOWN_POINTS) {
      this.stoppedBecause = `the answers took ${fit.delayPerRequestMs} ms longer with each request past the ${fit.threshold}th: the probe stopped after ${fit.points} of them rather than wait on a growing delay`;
      return true;
    }
    const held = r.receivedAt - (r.writtenAt ?? r.sentAt) - Math.min(...this.latencies);
    if (held > this.maxDelayMs) {
      this.stoppedBecause = `an answer was held ${Math.round(held)} ms longer than the fastest, more than the ${this.maxDelayMs} ms the probe waits on one: it stopped sending`;
      return true;
    }
    return false;
  };

  /** The delay measured, if the answers drew its line. */
  result(): SlowDownFit | null {
    return fitSlowDown(this.latencies);
  }

  /** What the report's evidence says of the answers' times. */
  evidence(): string[] {
    const fit = this.result();
    if (!fit) return this.stoppedBecause ? [this.stoppedBecause] : [];
    return [
      `the server delays rather than refuses: the first ${fit.threshold} answers came at once, then each of the next ${fit.points} took ${fit.delayPerRequestMs} ms longer than the one before (up to ${fit.longestMs} ms)`,
    ];
  }
}

/** The verdict's line for a limiter that delays: what it does instead of the 429 that never came. */
export function slowDownReason(s: SlowDown, sent: number): string {
  return `the server delays rather than refuses: past ${s.threshold} requests each answer is held ${s.delayPerRequestMs} ms longer than the one before, and no 429 came within ${sent} requests`;
}

/** The limiter as inferred, with the delay the answers drew and what they showed. */
export function withSlowDown(limiter: LimiterReport, watch: SlowDownWatch): LimiterReport {
  const fit = watch.result();
  return {
    ...limiter,
    slowDown: fit ? { threshold: fit.threshold, delayPerRequestMs: fit.delayPerRequestMs } : null,
    evidence: [...limiter.evidence, ...watch.evidence()],
  };
}
