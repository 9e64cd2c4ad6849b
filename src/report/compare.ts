import { seededRandom } from '../api/random.ts';
import { errorCount } from '../record/errors.ts';
import type { OperationSummary, RunResult } from '../result/types.ts';
import { percentileRatioInterval } from '../stats/bootstrap.ts';
import {
  type RankedBuckets,
  rankAtPercentile,
  rankedBuckets,
  valueAtRank,
} from '../stats/histogram-ranks.ts';
import { type Interval, proportionDifference, rateRatio } from '../stats/rate-intervals.ts';
import { type Shift, sustainedShifts } from '../stats/sustained.ts';
import { normalQuantile, Variates } from '../stats/variates.ts';
import { decodeOrRefuse } from './decode-histogram.ts';
import { runSpan, workloadRequests } from './run-span.ts';
import { DEFAULT_TOLERANCES, type Metric, type Tolerances } from './tolerances.ts';

/**
 * Baseline against current, per operation and overall, so that CI can fail on a regression without
 * failing on noise. A metric is a regression only when its change is beyond the tolerance AND
 * significant on two levels:
 *
 * 1. Requests: the interval of the change excludes no change.
 *    - p50, p95, p99 of response time: a bootstrap interval of the ratio current/baseline, drawn
 *      from the encoded histograms (src/stats/bootstrap.ts). A percentile is tested only with at
 *      least 30 requests on each side and 5 beyond it (p95: 100, p99: 500): below that it is one or
 *      two extreme samples, and no resampling can say how far they would move.
 *    - error rate (5xx and transport errors) and 429 rate: Newcombe's interval of the difference of
 *      two proportions of requests.
 *    - rps: the workload's requests per second, as a Poisson rate ratio. Under an open model it is
 *      the configured rate and moves only when the target cannot keep up; the test mostly keeps an
 *      operation that the random flow mix called less often from counting as slower.
 *    The overall row's intervals are at `confidence` (95%), per-operation rows' at
 *    1 - (1 - confidence)/k for k operations compared (Bonferroni), so that sixteen operations do
 *    not turn up a false regression by chance.
 * 2. Seconds: the run's per-second figures moved the same way (src/stats/sustained.ts), because
 *    requests of one second share its stalls and a burst is not a regression.
 *
 * Fewer than 30 requests or 4 full seconds on a side: "too few samples", never significant. Two runs
 * still differ by what no single run can show (a warmer JIT, another load on the machine): that is
 * what the tolerances absorb.
 */

export interface CompareOptions {
  /** Over DEFAULT_TOLERANCES; see tolerances.ts for the units. */
  tolerances?: Partial<Tolerances>;
  /** Confidence of the overall row's tests (default 0.95). */
  confidence?: number;
  /** Seed of the bootstrap: the same two files always get the same verdict. */
  seed?: number;
}

/**
 * `not sustained`: the requests differ beyond chance, but the run's seconds do not show it (a burst,
 * a stall, one slow second).
 */
export type Significance = 'significant' | 'not significant' | 'not sustained' | 'too few samples';
export type Verdict = 'ok' | 'improved' | 'regression';

export interface MetricComparison {
  metric: Metric;
  /** ms for percentiles, per second for rps, a share (0..1) for errors and rate_limited. */
  baseline: number;
  current: number;
  delta: number;
  /** delta / baseline; undefined when the baseline is 0. */
  relative: number | undefined;
  /** Of the ratio current/baseline (percentiles, rps) or of the difference (errors, rate_limited). */
  interval: Interval | undefined;
  significance: Significance;
  verdict: Verdict;
}

export interface RowComparison {
  /** An operation id, or 'all'. */
  name: string;
  requests: { baseline: number; current: number };
  metrics: MetricComparison[];
}

export interface Comparison {
  /** Operations present in both results (in the baseline's order), then 'all'. */
  rows: RowComparison[];
  onlyInBaseline: string[];
  onlyInCurrent: string[];
  tolerances: Tolerances;
  confidence: number;
  /** Confidence of each per-operation interval, after the Bonferroni adjustment. */
  operationConfidence: number;
  /** What differs in how the two runs were set up (scenario, plan, workload...), to read the deltas by. */
  differences: string[];
  regressions: number;
  improvements: number;
}

export const MIN_REQUESTS = 30;
/** Samples that must lie beyond a percentile for its interval to mean anything. */
const MIN_TAIL = 5;
const PERCENTILE: Record<'p50' | 'p95' | 'p99', number> = { p50: 50, p95: 95, p99: 99 };

interface Side {
  summary: OperationSummary;
  seconds: number;
  buckets: RankedBuckets;
}

interface Context {
  tolerances: Tolerances;
  /** Probability left out beyond each end of an interval. */
  tail: number;
  variates: Variates;
  shifts: Record<Metric, Shift>;
}

export function compareResults(
  baseline: RunResult,
  current: RunResult,
  options: CompareOptions = {},
): Comparison {
  const tolerances = { ...DEFAULT_TOLERANCES, ...options.tolerances };
  const confidence = options.confidence ?? 0.95;
  const variates = new Variates(seededRandom(options.seed ?? 1));
  const shifts = sustainedShifts(baseline, current, confidence);
  const shared = Object.keys(baseline.operations).filter((id) => id in current.operations);
  const operationConfidence = 1 - (1 - confidence) / Math.max(1, shared.length);
  const bSeconds = runSpan(baseline).seconds;
  const cSeconds = runSpan(current).seconds;
  const side = (summary: OperationSummary, seconds: number, where: string): Side => ({
    summary,
    seconds,
    buckets: rankedBuckets(decodeOrRefuse(summary.histograms.response, `${where}.histograms.response`)),
  });
  const row = (name: string, b: OperationSummary, c: OperationSummary, level: number) => {
    const where = name === 'all' ? 'overall' : `operations.${name}`;
    return compareRow(name, side(b, bSeconds, `baseline: ${where}`), side(c, cSeconds, `current: ${where}`), {
      tolerances,
      tail: (1 - level) / 2,
      variates,
      shifts,
    });
  };
  const rows = [
    ...shared.map((id) =>
      row(
        id,
        baseline.operations[id] as OperationSummary,
        current.operations[id] as OperationSummary,
        operationConfidence,
      ),
    ),
    row('all', baseline.overall, current.overall, confidence),
  ];
  const verdicts = rows.flatMap((r) => r.metrics.map((m) => m.verdict));
  return {
    rows,
    onlyInBaseline: Object.keys(baseline.operations).filter((id) => !(id in current.operations)),
    onlyInCurrent: Object.keys(current.operations).filter((id) => !(id in baseline.operations)),
    tolerances,
    confidence,
    operationConfidence,
    differences: setupDifferences(baseline, current),
    regressions: verdicts.filter((v) => v === 'regression').length,
    improvements: verdicts.filter((v) => v === 'improved').length,
  };
}

function compareRow(name: string, b: Side, c: Side, ctx: Context): RowComparison {
  const enough = b.summary.requests >= MIN_REQUESTS && c.summary.requests >= MIN_REQUESTS;
  return {
    name,
    requests: { baseline: b.summary.requests, current: c.summary.requests },
    metrics: [
      latency('p50', b, c, enough, ctx),
      latency('p95', b, c, enough, ctx),
      latency('p99', b, c, enough, ctx),
      throughput(b, c, ctx),
      share('errors', errorCount(b.summary), errorCount(c.summary), b, c, enough, ctx),
      share('rate_limited', b.summary.rateLimited, c.summary.rateLimited, b, c, enough, ctx),
    ],
  };
}

const ms = (us: number) => Math.round(us) / 1000;

function latency(metric: 'p50' | 'p95' | 'p99', b: Side, c: Side, enough: boolean, ctx: Context) {
  const p = PERCENTILE[metric];
  const at = (s: Side) =>
    s.buckets.total ? ms(valueAtRank(s.buckets, rankAtPercentile(p, s.buckets.total))) : 0;
  const beyond = (s: Side) => (s.buckets.total * (100 - p)) / 100 >= MIN_TAIL;
  const tested = enough && beyond(b) && beyond(c) && ctx.shifts[metric] !== 'too few seconds';
  const interval = tested
    ? percentileRatioInterval(b.buckets, c.buckets, p, ctx.tail, ctx.variates)
    : undefined;
  return judge(metric, at(b), at(c), { interval, none: 1, worse: 1, relative: true }, ctx);
}

function throughput(b: Side, c: Side, ctx: Context) {
  const nb = workloadRequests(b.summary, b.seconds);
  const nc = workloadRequests(c.summary, c.seconds);
  const tested = nb >= MIN_REQUESTS && nc >= MIN_REQUESTS && ctx.shifts.rps !== 'too few seconds';
  const z = normalQuantile(1 - ctx.tail);
  const interval = tested ? rateRatio(nb, b.seconds, nc, c.seconds, z) : undefined;
  return judge('rps', b.summary.rate, c.summary.rate, { interval, none: 1, worse: -1, relative: true }, ctx);
}

function share(
  metric: 'errors' | 'rate_limited',
  kb: number,
  kc: number,
  b: Side,
  c: Side,
  enough: boolean,
  ctx: Context,
) {
  const nb = b.summary.requests;
  const nc = c.summary.requests;
  const z = normalQuantile(1 - ctx.tail);
  const tested = enough && ctx.shifts[metric] !== 'too few seconds';
  const interval = tested ? proportionDifference(kb, nb, kc, nc, z) : undefined;
  return judge(
    metric,
    nb ? kb / nb : 0,
    nc ? kc / nc : 0,
    { interval, none: 0, worse: 1, relative: false },
    ctx,
  );
}

interface Test {
  /** Undefined when there are too few samples to test. */
  interval: Interval | undefined;
  /** No change: 1 for a ratio, 0 for a difference. */
  none: number;
  /** 1 when higher is worse, -1 when lower is. */
  worse: 1 | -1;
  /** The tolerance is relative (latency, rps) or absolute (shares). */
  relative: boolean;
}

/**
 * Beyond the tolerance in the bad direction, with the interval wholly on that side of `none` and
 * the run's seconds moved that way: a regression. The mirror image: an improvement. Anything else is
 * ok, however large the change, when the data cannot tell it from noise.
 */
function judge(
  metric: Metric,
  baseline: number,
  current: number,
  test: Test,
  ctx: Context,
): MetricComparison {
  const delta = current - baseline;
  const relative = baseline === 0 ? undefined : delta / baseline;
  const change = test.relative ? relative : delta;
  const { interval } = test;
  let significance: Significance = 'too few samples';
  let verdict: Verdict = 'ok';
  if (interval) {
    const direction = interval.lower > test.none ? 'up' : interval.upper < test.none ? 'down' : undefined;
    const sustained = direction !== undefined && ctx.shifts[metric] === direction;
    significance = direction === undefined ? 'not significant' : sustained ? 'significant' : 'not sustained';
    // A change from nothing (no errors before) counts in full, whichever way the tolerance reads.
    const worse = (change ?? (delta === 0 ? 0 : Number.POSITIVE_INFINITY * Math.sign(delta))) * test.worse;
    const tolerance = ctx.tolerances[metric];
    if (sustained && direction === (test.worse > 0 ? 'up' : 'down') && worse > tolerance)
      verdict = 'regression';
    else if (sustained && direction === (test.worse > 0 ? 'down' : 'up') && -worse > tolerance)
      verdict = 'improved';
  }
  return { metric, baseline, current, delta, relative, interval, significance, verdict };
}

/** How the runs' setups differ: a changed workload explains a changed rps better than the target does. */
function setupDifferences(b: RunResult, c: RunResult): string[] {
  const out: string[] = [];
  const differ = (label: string, x: unknown, y: unknown, show = true) => {
    if (JSON.stringify(x) !== JSON.stringify(y))
      out.push(show ? `${label} (${String(x)} vs ${String(y)})` : label);
  };
  differ('scenario', b.meta.scenario, c.meta.scenario);
  differ('plan', b.meta.plan, c.meta.plan);
  differ('plan windows', b.config.windows, c.config.windows, false);
  differ('workload', b.config.workload, c.config.workload, false);
  differ('pacing', b.config.enforce ? 'on' : 'off', c.config.enforce ? 'on' : 'off');
  differ('time scale', b.config.timeScale, c.config.timeScale);
  // Each embedded run listens on its own free port: only a named target can differ meaningfully.
  if (!b.meta.embeddedTarget || !c.meta.embeddedTarget) differ('target', b.meta.target, c.meta.target);
  if (b.meta.partial || c.meta.partial)
    out.push(
      `interrupted (${b.meta.partial && c.meta.partial ? 'both' : b.meta.partial ? 'baseline' : 'current'})`,
    );
  return out;
}
