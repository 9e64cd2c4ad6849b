import { errorCount } from '../record/errors.ts';
import { decodeHistogram, type LatencyStats } from '../record/histogram.ts';
import type { OperationSummary, RunResult, ThresholdResult, TierSummary } from '../result/types.ts';
import { BAN_METRICS, compare, type Threshold } from './threshold-parse.ts';

const UNIT: Readonly<Record<Threshold['kind'], string>> = {
  latency: ' ms',
  share: '%',
  rate: '/s',
  count: '',
};

const STORED: Readonly<Record<string, keyof LatencyStats>> = {
  avg: 'mean',
  mean: 'mean',
  med: 'p50',
  min: 'min',
  max: 'max',
  p50: 'p50',
  p75: 'p75',
  p90: 'p90',
  p95: 'p95',
  p99: 'p99',
  'p99.9': 'p99.9',
};

function transportErrorCount(s: OperationSummary): number {
  return Object.values(s.transportErrors).reduce((sum, n) => sum + n, 0);
}

/**
 * Latency is response time, the coordinated-omission corrected figure (what a user arriving on
 * schedule waited), as k6's http_req_duration is what its users gate on. Percentiles the result
 * does not store are read from its encoded histogram.
 */
function latency(t: Threshold, s: Pick<OperationSummary, 'response' | 'histograms'>): number | null {
  if (s.response.count === 0) return null;
  const stored = STORED[t.metric];
  if (stored) return s.response[stored];
  const histogram = decodeHistogram(s.histograms.response);
  try {
    // A decoded histogram knows its largest value only to its bucket's top; the stored max is exact.
    return Math.min(
      Math.round(histogram.getValueAtPercentile(t.percentile as number)) / 1000,
      s.response.max,
    );
  } finally {
    histogram.destroy();
  }
}

type Measured = { actual: number | null; why?: string };

/** A tier's name for messages: `plan pro`, `group abusive`. */
const tierName = (t: Threshold) => (t.tier ? `${t.tier.kind} ${t.tier.name}` : '');

/**
 * A tenant mix's tier: byPlan for `plan:`, byTenantGroup for `group:`. Latency is response time as
 * the run-wide figures are; utilisation is the tier's overall share or its least-used key's.
 */
function measureTier(t: Threshold & { tier: NonNullable<Threshold['tier']> }, result: RunResult): Measured {
  const tiers = t.tier.kind === 'plan' ? result.byPlan : result.byTenantGroup;
  const field = t.tier.kind === 'plan' ? 'byPlan' : 'byTenantGroup';
  if (!result.byPlan && !result.byTenantGroup)
    return { actual: null, why: `${tierName(t)}: the run had no tenant mix (tenants, --tenants)` };
  const s: TierSummary | undefined =
    tiers && Object.hasOwn(tiers, t.tier.name) ? tiers[t.tier.name] : undefined;
  if (!s) {
    const known = Object.keys(tiers ?? {});
    return {
      actual: null,
      why: `no ${tierName(t)} in the tenant mix (${field}: ${known.length > 0 ? known.join(', ') : 'none'})`,
    };
  }
  switch (t.metric) {
    case 'requests':
      return { actual: s.requests };
    case 'rps':
      return { actual: s.rate };
    case 'violations':
      return { actual: s.violations };
    case 'quota_utilization':
      return { actual: s.utilization.overall * 100 };
    case 'quota_utilization_min':
      return { actual: s.utilization.min * 100 };
  }
  if (s.requests === 0) return { actual: null, why: `no requests for ${tierName(t)}` };
  switch (t.metric) {
    case 'rate_limited':
      return { actual: (s.rateLimited * 100) / s.requests };
    case 'errors':
      return { actual: (s.errors * 100) / s.requests };
    default:
      return { actual: latency(t, s) };
  }
}

/** The measured value in the threshold's unit, or null with the reason when there is nothing to judge. */
function measure(t: Threshold, result: RunResult): Measured {
  if (t.tier !== undefined)
    return measureTier(t as Threshold & { tier: NonNullable<Threshold['tier']> }, result);
  if (t.capacityPlan !== undefined && BAN_METRICS.has(t.metric)) {
    const b = result.banProbe;
    if (!b || b.plan !== t.capacityPlan)
      return { actual: null, why: `no ban probe on a ${t.capacityPlan} key` };
    const value = {
      strikes_to_ban: b.strikes.toBan,
      ban_seconds: b.ban?.announcedSeconds,
      ban_end_error_ms: b.ban?.endErrorMs,
    }[t.metric];
    if (value === null || value === undefined)
      return { actual: null, why: `ban probe ${t.capacityPlan}: ${t.metric} was not measured` };
    return { actual: value };
  }
  if (t.capacityPlan !== undefined) {
    const r = result.capacity?.find((c) => c.plan === t.capacityPlan);
    if (!r) return { actual: null, why: `no capacity report for plan ${t.capacityPlan}` };
    const value = {
      accepted_per_minute: r.rate.acceptedPerMinute,
      first_429_at: r.exhaust.first429At,
      reset_accuracy_ms: r.recovery.resetAccuracyMs,
      retry_after_accuracy_ms: r.recovery.retryAfterAccuracyMs,
      accepted_per_day: r.daily?.acceptedPerDay,
      daily_first_429_at: r.daily?.first429At,
      sustained_per_second: r.limiter.sustainedPerSecond,
      burst: r.limiter.burst,
      max_in_flight: r.limiter.maxInFlight,
    }[t.metric];
    if (value === null || value === undefined)
      return { actual: null, why: `capacity ${t.capacityPlan}: ${t.metric} was not measured` };
    return { actual: value };
  }
  switch (t.metric) {
    case 'quota_utilization':
      return { actual: result.compliance.quotaUtilization * 100 };
    case 'violations':
      return { actual: result.compliance.violations };
    case 'dropped_iterations':
      return { actual: result.workload.droppedIterations };
    case 'failed_iterations':
      return { actual: result.workload.failedIterations };
  }
  const s = t.operation === undefined ? result.overall : result.operations[t.operation];
  const where = t.operation ?? 'the run';
  if (!s || s.requests === 0) {
    if (t.metric === 'requests' || t.metric === 'rps') return { actual: 0 };
    return { actual: null, why: `no requests for ${where}` };
  }
  switch (t.metric) {
    case 'requests':
      return { actual: s.requests };
    case 'rps':
      return { actual: s.rate };
    case 'rate_limited':
      return { actual: (s.rateLimited * 100) / s.requests };
    case 'errors':
      return { actual: (errorCount(s) * 100) / s.requests };
    case 'checks': {
      // Share of responses that passed every check; transport errors have no response to check.
      const responses = s.requests - transportErrorCount(s);
      if (responses === 0) return { actual: null, why: `no responses for ${where}` };
      return { actual: ((responses - s.checkFailures) * 100) / responses };
    }
    default:
      return { actual: latency(t, s) };
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export function evaluateThreshold(t: Threshold, result: RunResult): ThresholdResult {
  const { actual, why } = measure(t, result);
  const verdict: ThresholdResult = {
    expression: t.expression,
    source: t.source,
    actual: actual === null ? null : round(actual),
    passed: actual !== null && compare(actual, t.comparator, t.value),
  };
  if (!verdict.passed) {
    verdict.detail =
      actual === null
        ? `${why ?? 'nothing measured'}: cannot hold`
        : `${t.capacityPlan ? `capacity ${t.capacityPlan} ` : ''}${t.tier ? `${tierName(t)} ` : ''}${t.operation ? `${t.operation} ` : ''}${t.metric} was ${round(actual)}${UNIT[t.kind]}, wanted ${t.comparator} ${t.value}${UNIT[t.kind]}`;
  }
  return verdict;
}

export function evaluateThresholds(thresholds: readonly Threshold[], result: RunResult): ThresholdResult[] {
  return thresholds.map((t) => evaluateThreshold(t, result));
}
