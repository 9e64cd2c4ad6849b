import { encodeHistogram, type Histogram, latencyStats } from '../record/histogram.ts';
import type { StretchTally, TenantTally, TierTally } from '../record/tenant-tally.ts';
import { judgeIsolation } from '../stats/isolation.ts';
import type { IsolationStretch, IsolationVerdict, TierSummary } from './types.ts';

/**
 * Utilisation of a tier's keys while the workload ran: admitted over what the keys were allowed
 * (`planRatePerKey` x `seconds` each). `overall` is the tier's; min, p50 and max are the spread
 * across its keys, each key's own share, a key that sent nothing counting 0. Shared with merge,
 * which adds the parts' admittedPerKey and computes it again.
 */
export function utilizationOf(
  admittedPerKey: ArrayLike<number>,
  keys: number,
  planRatePerKey: number,
  seconds: number,
): TierSummary['utilization'] {
  const allowed = planRatePerKey * seconds;
  if (!(allowed > 0) || keys === 0) return { overall: 0, min: 0, p50: 0, max: 0 };
  const shares = new Float64Array(keys);
  let admitted = 0;
  for (let i = 0; i < keys; i++) {
    const n = i < admittedPerKey.length ? (admittedPerKey[i] as number) : 0;
    admitted += n;
    shares[i] = n / allowed;
  }
  shares.sort();
  // The lower median (nearest rank): a share some key had, not an average of two.
  const p50 = shares[Math.ceil(keys / 2) - 1] as number;
  return {
    overall: admitted / (allowed * keys),
    min: shares[0] as number,
    p50,
    max: shares[keys - 1] as number,
  };
}

function tierSummary(tier: TierTally, runSeconds: number): TierSummary {
  const requests = tier.requests;
  // A tier that starts later is judged over its own seconds: it could not use the quota before.
  const seconds = Math.max(0, runSeconds - tier.startSeconds);
  return {
    plan: tier.plan,
    keys: tier.keys,
    keysSeen: tier.keysSeen,
    enforce: tier.enforce,
    requests,
    rate: seconds > 0 ? tier.duringWorkload / seconds : 0,
    statuses: { ...tier.statuses },
    rateLimited: tier.rateLimited,
    rateLimitedRate: requests ? tier.rateLimited / requests : 0,
    violations: tier.violations,
    errors: tier.errors,
    errorRate: requests ? tier.errors / requests : 0,
    service: latencyStats(tier.service),
    response: latencyStats(tier.response),
    histograms: { service: encodeHistogram(tier.service), response: encodeHistogram(tier.response) },
    admitted: tier.admitted,
    planRatePerKey: tier.planRatePerKey,
    ...(tier.startSeconds > 0 ? { startSeconds: tier.startSeconds } : {}),
    utilization: utilizationOf(tier.admittedPerKey, tier.keys, tier.planRatePerKey, seconds),
    admittedPerKey: Array.from(tier.admittedPerKey),
  };
}

/**
 * A percentile of a histogram in ms: the top of its bucket (up to 0.1% above the samples in it).
 * Not capped at the largest sample as latencyStats is: a stretch keeps no exact max, and merge
 * must read the same figure from the encoded histogram as the run did from the one in memory.
 */
export function percentileMs(h: Histogram, p: number): number {
  if (h.totalCount === 0) return 0;
  return Math.round(h.getValueAtPercentile(p)) / 1000;
}

/** One stretch as the result keeps it: its counts, p50 and p99, and its histogram for merge. */
export function isolationStretch(
  counts: { requests: number; rateLimited: number; errors: number },
  response: Histogram,
): IsolationStretch {
  return {
    requests: counts.requests,
    rateLimited: counts.rateLimited,
    errors: counts.errors,
    p50Ms: percentileMs(response, 50),
    p99Ms: percentileMs(response, 99),
    histogram: encodeHistogram(response),
  };
}

const stretchOf = (s: StretchTally) => isolationStretch(s, s.response);

/** byPlan, byTenantGroup and the isolation verdict of a tenant mix (nothing without one). */
export function tenantFigures(
  tally: TenantTally | undefined,
  seconds: number,
): {
  byPlan?: Record<string, TierSummary>;
  byTenantGroup?: Record<string, TierSummary>;
  isolation?: IsolationVerdict;
} {
  if (!tally) return {};
  const tiers = (m: Map<string, TierTally>) =>
    Object.fromEntries([...m].map(([name, tier]) => [name, tierSummary(tier, seconds)]));
  const figures: ReturnType<typeof tenantFigures> = {};
  if (tally.byPlan.size > 0) figures.byPlan = tiers(tally.byPlan);
  if (tally.byGroup.size > 0) figures.byTenantGroup = tiers(tally.byGroup);
  if (tally.noisy) {
    const stretches = Object.fromEntries(
      [...tally.stretches].map(([plan, s]) => [
        plan,
        { before: stretchOf(s.before), after: stretchOf(s.after) },
      ]),
    );
    figures.isolation = judgeIsolation(tally.noisy.groups, tally.noisy.fromMs, stretches);
  }
  return figures;
}
