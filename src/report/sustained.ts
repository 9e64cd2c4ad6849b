import type { TimelinePoint } from '../record/timeline.ts';
import type { RunResult } from '../result/types.ts';
import { mannWhitney } from './rank-test.ts';
import type { Metric } from './tolerances.ts';

/**
 * Whether a change holds across the run's seconds, from the timelines: the second level of a
 * comparison's significance.
 *
 * Requests are not independent samples. A GC pause, a busy CPU or a stalled generator slows every
 * request of a second at once, so the request-level intervals (bootstrap.ts, rate-intervals.ts)
 * call such a burst significant: two identical 4 s runs of catalogue-browse measured p95 +556%,
 * "significant" on their histograms, from one slow second. Seconds are far closer to independent
 * (autocannon-compare also compares per-second samples), so a change counts only when the
 * per-second values of the run moved the same way: a Mann-Whitney U test over them at `confidence`.
 *
 * The timeline keeps service time p50 and p99 per second, overall: p50 stands for p50, p99 for p95
 * and p99, and an operation's change must show in the run's seconds too (there is no per-operation
 * timeline), so a regression of a rarely called operation that leaves the run's seconds unmoved is
 * reported as not sustained rather than flagged.
 */

export type Shift = 'up' | 'down' | 'none' | 'too few seconds';

/** Seconds a side needs: with four against four, a complete separation is p = 0.03. */
export const MIN_SECONDS = 4;
/** A second with fewer requests says little about its percentiles. */
const MIN_REQUESTS_PER_SECOND = 5;

const SERIES: Record<Metric, (p: TimelinePoint) => number> = {
  p50: (p) => p.p50,
  p95: (p) => p.p99,
  p99: (p) => p.p99,
  rps: (p) => p.requests,
  errors: (p) => p.errors / p.requests,
  rate_limited: (p) => p.rateLimited / p.requests,
};

/** The seconds a run's figures can be judged on: full ones (not the last, cut short) with enough requests. */
function seconds(result: RunResult): TimelinePoint[] {
  return result.timeline.slice(0, -1).filter((p) => p.requests >= MIN_REQUESTS_PER_SECOND);
}

export function sustainedShifts(
  baseline: RunResult,
  current: RunResult,
  confidence: number,
): Record<Metric, Shift> {
  const a = seconds(baseline);
  const b = seconds(current);
  const shift = (metric: Metric): Shift => {
    if (a.length < MIN_SECONDS || b.length < MIN_SECONDS) return 'too few seconds';
    const { p, direction } = mannWhitney(a.map(SERIES[metric]), b.map(SERIES[metric]));
    if (p >= 1 - confidence || direction === 0) return 'none';
    return direction > 0 ? 'up' : 'down';
  };
  return {
    p50: shift('p50'),
    p95: shift('p95'),
    p99: shift('p99'),
    rps: shift('rps'),
    errors: shift('errors'),
    rate_limited: shift('rate_limited'),
  };
}
