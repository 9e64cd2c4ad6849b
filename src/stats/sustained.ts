import type { TimelinePoint } from '../record/timeline.ts';
import type { RunResult } from '../result/types.ts';
import { mannWhitney } from './rank-test.ts';

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

/**
 * The metrics a comparison judges (src/report/tolerances.ts's METRICS), named here so that the
 * statistics do not import from the report; compare.ts indexes this record by its own Metric, so the
 * type checker catches the two lists drifting apart.
 */
export type Metric = 'p50' | 'p95' | 'p99' | 'rps' | 'errors' | 'rate_limited';

/** Bins a side needs: with four against four, a complete separation is p = 0.03. */
export const MIN_SECONDS = 4;
/** A bin with fewer requests says little about its percentiles. */
const MIN_REQUESTS_PER_BIN = 5;

/** One or more consecutive seconds, pooled until they hold enough requests to say something. */
interface Bin {
  requests: number;
  /** Requests per second over the bin. */
  rate: number;
  errors: number;
  rateLimited: number;
  /** Request-weighted p50 and the largest p99 of its seconds (approximate, like merged timelines). */
  p50: number;
  p99: number;
}

const SERIES: Record<Metric, (b: Bin) => number> = {
  p50: (b) => b.p50,
  p95: (b) => b.p99,
  p99: (b) => b.p99,
  rps: (b) => b.rate,
  errors: (b) => b.errors / b.requests,
  rate_limited: (b) => b.rateLimited / b.requests,
};

/**
 * The full seconds of a run (not the last, cut short), pooled in order into bins of at least
 * MIN_REQUESTS_PER_BIN requests. Dropping thin seconds instead left a slow run (a free plan at its
 * real rate: one request a second) with nothing to test, so even 0% -> 100% errors passed.
 */
function bins(result: RunResult): Bin[] {
  const out: Bin[] = [];
  let open: { from: number; points: TimelinePoint[]; requests: number } | undefined;
  for (const point of result.timeline.slice(0, -1)) {
    open ??= { from: point.t, points: [], requests: 0 };
    open.points.push(point);
    open.requests += point.requests;
    if (open.requests < MIN_REQUESTS_PER_BIN) continue;
    const { points, requests, from } = open;
    const sum = (f: (p: TimelinePoint) => number) => points.reduce((n, p) => n + f(p), 0);
    out.push({
      requests,
      rate: requests / (point.t - from + 1),
      errors: sum((p) => p.errors),
      rateLimited: sum((p) => p.rateLimited),
      p50: sum((p) => p.p50 * p.requests) / requests,
      p99: Math.max(...points.map((p) => p.p99)),
    });
    open = undefined;
  }
  return out;
}

export function sustainedShifts(
  baseline: RunResult,
  current: RunResult,
  confidence: number,
): Record<Metric, Shift> {
  const a = bins(baseline);
  const b = bins(current);
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
