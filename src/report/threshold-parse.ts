import { InputError } from '../api/input-error.ts';

/**
 * The threshold language, named as k6 users know it: `[operation:]metric op value[unit]`, e.g.
 * `p99<300ms`, `listPets:p(95)<100ms`, `rate_limited<1%`, `checks>=100%`, `rps>=50`,
 * `violations==0`; and a tenant mix's tiers, `plan:<plan>:metric...` and `group:<name>:metric...`
 * (`plan:pro:p99<300ms`, `plan:free:rate_limited<1%`). One expression is one verdict; a malformed
 * one is refused before any traffic.
 */

export type Comparator = '<' | '<=' | '>' | '>=' | '==' | '!=';

/** How a metric's value is written and shown: latency in ms, shares in %, rates per second, counts. */
export type MetricKind = 'latency' | 'share' | 'rate' | 'count';

interface MetricSpec {
  kind: MetricKind;
  /** Whether `operation:` may prefix it (run-wide figures such as violations have no per-operation value). */
  perOperation: boolean;
}

const METRICS: Readonly<Record<string, MetricSpec>> = {
  avg: { kind: 'latency', perOperation: true },
  mean: { kind: 'latency', perOperation: true },
  med: { kind: 'latency', perOperation: true },
  min: { kind: 'latency', perOperation: true },
  max: { kind: 'latency', perOperation: true },
  rate_limited: { kind: 'share', perOperation: true },
  errors: { kind: 'share', perOperation: true },
  checks: { kind: 'share', perOperation: true },
  rps: { kind: 'rate', perOperation: true },
  requests: { kind: 'count', perOperation: true },
  quota_utilization: { kind: 'share', perOperation: false },
  /** A tier's least-used key's share of its quota (`plan:<plan>:` only). */
  quota_utilization_min: { kind: 'share', perOperation: false },
  violations: { kind: 'count', perOperation: false },
  dropped_iterations: { kind: 'count', perOperation: false },
  failed_iterations: { kind: 'count', perOperation: false },
};

export const METRIC_NAMES: readonly string[] = ['p<N>', 'p(<N>)', ...Object.keys(METRICS)];

/**
 * What a tier (TierSummary) has a figure for, besides latency percentiles: its response time, 429s,
 * errors, rate, requests, violations and utilisation (overall, and its least-used key's).
 */
const TIER_METRICS: ReadonlySet<string> = new Set([
  'avg',
  'mean',
  'med',
  'min',
  'max',
  'rate_limited',
  'errors',
  'rps',
  'requests',
  'violations',
  'quota_utilization',
  'quota_utilization_min',
]);
/** Figures only a tier has. */
const TIER_ONLY: ReadonlySet<string> = new Set(['quota_utilization_min']);
const TIER_SHAPE =
  /^(plan|group):([A-Za-z0-9_-]+):([a-z_]+|p\(\s*[\d.]+\s*\)|p[\d.]+)\s*(<=|>=|==|!=|<|>)\s*(.+)$/;

/** A tenant mix's tier: a plan's unnamed groups (`byPlan`) or a named group (`byTenantGroup`). */
export interface ThresholdTier {
  kind: 'plan' | 'group';
  name: string;
}

/** `capacity.<plan>.<metric>` (the `capacity` command): per window counts and accuracies in ms. */
export const CAPACITY_METRICS: Readonly<Record<string, MetricSpec>> = {
  accepted_per_minute: { kind: 'count', perOperation: false },
  first_429_at: { kind: 'count', perOperation: false },
  reset_accuracy_ms: { kind: 'latency', perOperation: false },
  retry_after_accuracy_ms: { kind: 'latency', perOperation: false },
  accepted_per_day: { kind: 'count', perOperation: false },
  daily_first_429_at: { kind: 'count', perOperation: false },
  strikes_to_ban: { kind: 'count', perOperation: false },
  ban_seconds: { kind: 'count', perOperation: false },
  ban_end_error_ms: { kind: 'latency', perOperation: false },
  sustained_per_second: { kind: 'rate', perOperation: false },
  burst: { kind: 'count', perOperation: false },
  max_in_flight: { kind: 'count', perOperation: false },
};
/** Capacity metrics of `--probe-ban`: judged on the ban report of the plan's ban key. */
export const BAN_METRICS: ReadonlySet<string> = new Set([
  'strikes_to_ban',
  'ban_seconds',
  'ban_end_error_ms',
]);
const CAPACITY_SHAPE = /^capacity\.([A-Za-z0-9_-]+)\.([a-z0-9_]+)\s*(<=|>=|==|!=|<|>)\s*(.+)$/;

export interface Threshold {
  /** As declared, trimmed. */
  expression: string;
  source: 'scenario' | 'cli';
  /** Undefined: the whole run. */
  operation?: string;
  /** `capacity.<plan>.<metric>`: a figure of that plan's capacity report. */
  capacityPlan?: string;
  /** `plan:<plan>:` or `group:<name>:`: a figure of that tier of the tenant mix. */
  tier?: ThresholdTier;
  /** `p99`, `avg`, `errors`, ... (a percentile keeps its number in `percentile`). */
  metric: string;
  percentile?: number;
  kind: MetricKind;
  comparator: Comparator;
  /** In the metric's unit: ms for latency, percent for shares, per second, or a count. */
  value: number;
  /** Fail the run as soon as this threshold fails, not only at the end. */
  abortOnFail: boolean;
  /** With abortOnFail: do not judge before this much of the workload has run (ms). */
  delayAbortEvalMs: number;
}

const SHAPE = /^(?:([A-Za-z_][\w.-]*):)?([a-z_]+|p\(\s*[\d.]+\s*\)|p[\d.]+)\s*(<=|>=|==|!=|<|>)\s*(.+)$/;
const LATENCY_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, us: 0.001, µs: 0.001 };

function parseValue(text: string, spec: MetricSpec, fail: (why: string) => never): number {
  const match = /^(-?\d+(?:\.\d+)?)\s*([a-zµ%/]*)$/.exec(text.trim());
  if (!match) return fail(`'${text.trim()}' is not a number with an optional unit`);
  const number = Number(match[1]);
  const unit = match[2] as string;
  if (number < 0) return fail('a threshold value cannot be negative');
  switch (spec.kind) {
    case 'latency': {
      // A bare number is milliseconds, as in k6.
      const scale = unit === '' ? 1 : LATENCY_UNITS[unit];
      if (scale === undefined) return fail(`unit '${unit}' is not a duration (ms, s, us)`);
      return number * scale;
    }
    case 'share':
      // '1%' or, as in k6, a fraction: '0.01'. Stored as percent.
      if (unit === '%') return number;
      if (unit !== '') return fail(`unit '${unit}' is not a share (write 1% or 0.01)`);
      if (number > 1)
        return fail(`${number} is not a fraction between 0 and 1 (write ${number}% for a percentage)`);
      return number * 100;
    case 'rate':
      if (unit !== '' && unit !== '/s') return fail(`unit '${unit}' is not a rate (requests per second)`);
      return number;
    case 'count':
      if (unit !== '') return fail(`a count takes no unit, not '${unit}'`);
      return number;
  }
}

/** A metric's name as stored (`p(95)` is `p95`), its percentile if it is one, and how it is written. */
function resolveMetric(
  rawMetric: string,
  fail: (why: string) => never,
): { metric: string; percentile?: number; spec: MetricSpec } {
  const p = /^p\(?\s*([\d.]+)\s*\)?$/.exec(rawMetric);
  if (p) {
    const percentile = Number(p[1]);
    if (!Number.isFinite(percentile) || percentile <= 0 || percentile > 100)
      fail(`percentile '${p[1]}' is not between 0 and 100`);
    return { metric: `p${percentile}`, percentile, spec: { kind: 'latency', perOperation: true } };
  }
  // Own keys only: 'constructor' or '__proto__' are not metrics.
  const spec = Object.hasOwn(METRICS, rawMetric) ? METRICS[rawMetric] : undefined;
  if (!spec) return fail(`unknown metric '${rawMetric}' (metrics: ${METRIC_NAMES.join(', ')})`);
  return { metric: rawMetric, spec };
}

/**
 * Parses one threshold. `operations` is the operation table's ids, so that a misspelt operation is
 * an error now rather than a threshold that silently never matches.
 */
export function parseThreshold(
  text: string,
  source: 'scenario' | 'cli',
  operations: ReadonlySet<string>,
  options: { abortOnFail?: boolean; delayAbortEvalMs?: number } = {},
): Threshold {
  const expression = text.trim();
  const fail = (why: string): never => {
    throw new InputError(`threshold '${expression}': ${why}`);
  };
  const capacity = CAPACITY_SHAPE.exec(expression);
  if (capacity) {
    const [, plan, metric, comparator, valueText] = capacity as unknown as [
      string,
      string,
      string,
      Comparator,
      string,
    ];
    const spec = Object.hasOwn(CAPACITY_METRICS, metric) ? CAPACITY_METRICS[metric] : undefined;
    if (!spec)
      return fail(
        `unknown capacity metric '${metric}' (metrics: ${Object.keys(CAPACITY_METRICS).join(', ')})`,
      );
    return {
      expression,
      source,
      capacityPlan: plan,
      metric,
      kind: spec.kind,
      comparator,
      value: parseValue(valueText, spec, fail),
      abortOnFail: options.abortOnFail ?? false,
      delayAbortEvalMs: options.delayAbortEvalMs ?? 0,
    };
  }
  const tierMatch = TIER_SHAPE.exec(expression);
  const match = tierMatch
    ? ([tierMatch[0], undefined, tierMatch[3], tierMatch[4], tierMatch[5]] as const)
    : SHAPE.exec(expression);
  if (!match) {
    return fail(
      `not of the form [operation:]metric<op>value or plan:<plan>:metric<op>value, e.g. p99<300ms, listPets:p95<100ms, errors<1%, plan:pro:p99<300ms (metrics: ${METRIC_NAMES.join(', ')})`,
    );
  }
  const [, operation, rawMetric, comparator, valueText] = match as unknown as [
    string,
    string | undefined,
    string,
    Comparator,
    string,
  ];
  const { metric, percentile, spec } = resolveMetric(rawMetric, fail);
  const tier: ThresholdTier | undefined = tierMatch
    ? { kind: tierMatch[1] as ThresholdTier['kind'], name: tierMatch[2] as string }
    : undefined;
  if (tier && percentile === undefined && !TIER_METRICS.has(metric))
    fail(`'${metric}' has no figure per tier (tier metrics: p<N>, ${[...TIER_METRICS].join(', ')})`);
  if (!tier && TIER_ONLY.has(metric))
    fail(`'${metric}' is a figure of a tenant tier; write plan:<plan>:${metric} or group:<name>:${metric}`);
  if (operation !== undefined) {
    if (!spec.perOperation) fail(`'${metric}' is a figure of the whole run; drop '${operation}:'`);
    if (!operations.has(operation))
      fail(`no operation '${operation}' in the document (operations: ${[...operations].join(', ')})`);
  }
  const threshold: Threshold = {
    expression,
    source,
    metric,
    kind: spec.kind,
    comparator,
    value: parseValue(valueText, spec, fail),
    abortOnFail: options.abortOnFail ?? false,
    delayAbortEvalMs: options.delayAbortEvalMs ?? 0,
  };
  if (operation !== undefined) threshold.operation = operation;
  if (tier !== undefined) threshold.tier = tier;
  if (percentile !== undefined) threshold.percentile = percentile;
  return threshold;
}

export function compare(measured: number, comparator: Comparator, limit: number): boolean {
  // Shares are ratios times 100: 7 errors in 100 must read 7, not 7.000000000000001, at '<= 7%'.
  const actual = Number(measured.toPrecision(12));
  switch (comparator) {
    case '<':
      return actual < limit;
    case '<=':
      return actual <= limit;
    case '>':
      return actual > limit;
    case '>=':
      return actual >= limit;
    case '==':
      return actual === limit;
    case '!=':
      return actual !== limit;
  }
}
