import { InputError } from '../api/input-error.ts';
import { encodeHistogram, newHistogram } from '../record/histogram.ts';
import { isolationStretch, utilizationOf } from '../result/build-tenants.ts';
import type { IsolationStretch, IsolationVerdict, TierSummary } from '../result/types.ts';
import { judgeIsolation } from '../stats/isolation.ts';
import { decodeOrRefuse } from './decode-histogram.ts';
import { addCounts, mergedStats } from './merge-summary.ts';

export interface TiersPart {
  /** A result's byPlan or byTenantGroup; absent in results without a tenant mix. */
  tiers: Record<string, TierSummary> | undefined;
  /** The part's workload span, seconds (its rate times this is its request count). */
  seconds: number;
  /** Where the tiers are, for messages: `result 2: byPlan`. */
  where: string;
}

/**
 * byPlan or byTenantGroup of several parts, tier by tier: counts and histograms added, admitted
 * per key added element-wise (a key lives in one generator, so a key's count is exact), the rate
 * and the utilisation computed again over `coveredSeconds` as the run-wide figures are. Undefined
 * when no part has tiers.
 */
export function mergeTiers(
  parts: TiersPart[],
  coveredSeconds: number,
): Record<string, TierSummary> | undefined {
  if (parts.every((p) => p.tiers === undefined)) return undefined;
  const names = [...new Set(parts.flatMap((p) => Object.keys(p.tiers ?? {})))];
  const merged: Record<string, TierSummary> = {};
  for (const name of names) {
    const having = parts.flatMap((p) => {
      const tier = p.tiers?.[name];
      return tier ? [{ tier, seconds: p.seconds, where: `${p.where}.${name}` }] : [];
    });
    merged[name] = mergeTier(having, coveredSeconds);
  }
  return merged;
}

function mergeTier(
  parts: { tier: TierSummary; seconds: number; where: string }[],
  covered: number,
): TierSummary {
  const first = (parts[0] as (typeof parts)[number]).tier;
  const service = newHistogram();
  const response = newHistogram();
  const keys = Math.max(...parts.map((p) => p.tier.keys));
  const admittedPerKey = new Array<number>(keys).fill(0);
  let duringWorkload = 0;
  let keysSeen = 0;
  const m = { requests: 0, rateLimited: 0, violations: 0, errors: 0, admitted: 0 };
  const statuses: Record<string, number> = {};
  for (const { tier: t, seconds, where } of parts) {
    if (Math.abs(t.planRatePerKey - first.planRatePerKey) > 1e-9 * first.planRatePerKey)
      throw new InputError(
        `${where}: ${t.planRatePerKey} requests per second per key differs from ${first.planRatePerKey}: utilisation of different quotas cannot be merged`,
      );
    m.requests += t.requests;
    m.rateLimited += t.rateLimited;
    m.violations += t.violations;
    m.errors += t.errors;
    m.admitted += t.admitted;
    addCounts(statuses, t.statuses);
    // A tier's rate counts from its own start (startSeconds), as its run computed it.
    duringWorkload += Math.round(t.rate * Math.max(0, seconds - (t.startSeconds ?? 0)));
    keysSeen += t.keysSeen;
    t.admittedPerKey.forEach((n, i) => {
      if (i < keys) admittedPerKey[i] = (admittedPerKey[i] as number) + n;
    });
    service.add(decodeOrRefuse(t.histograms.service, `${where}.histograms.service`));
    response.add(decodeOrRefuse(t.histograms.response, `${where}.histograms.response`));
  }
  // Parts that split the keys (shards, workers) add up exactly; runs one after another on the same
  // keys would count a key twice: never more than the keys, never fewer than those admitted.
  const admittedKeys = admittedPerKey.reduce((n, x) => n + (x > 0 ? 1 : 0), 0);
  const start = first.startSeconds ?? 0;
  const own = Math.max(0, covered - start);
  return {
    plan: first.plan,
    keys,
    keysSeen: Math.max(admittedKeys, Math.min(keys, keysSeen)),
    enforce: parts.every((p) => p.tier.enforce),
    requests: m.requests,
    rate: own > 0 ? duringWorkload / own : 0,
    statuses,
    rateLimited: m.rateLimited,
    rateLimitedRate: m.requests ? m.rateLimited / m.requests : 0,
    violations: m.violations,
    errors: m.errors,
    errorRate: m.requests ? m.errors / m.requests : 0,
    service: mergedStats(
      service,
      parts.map((p) => p.tier.service),
    ),
    response: mergedStats(
      response,
      parts.map((p) => p.tier.response),
    ),
    histograms: { service: encodeHistogram(service), response: encodeHistogram(response) },
    admitted: m.admitted,
    planRatePerKey: first.planRatePerKey,
    ...(start > 0 ? { startSeconds: start } : {}),
    utilization: utilizationOf(admittedPerKey, keys, first.planRatePerKey, own),
    admittedPerKey,
  };
}

/**
 * The isolation verdict of several parts, judged again on their stretches added plan by plan
 * (counts summed, histograms added): the parts each saw some of the compliant tenants. One part's
 * verdict is kept as it is. Undefined when no part has one.
 */
export function mergeIsolation(
  parts: { isolation: IsolationVerdict | undefined; where: string }[],
): IsolationVerdict | undefined {
  const present = parts.filter((p) => p.isolation !== undefined) as {
    isolation: IsolationVerdict;
    where: string;
  }[];
  if (present.length === 0) return undefined;
  if (present.length === 1) return structuredClone((present[0] as (typeof present)[number]).isolation);
  const groups = [...new Set(present.flatMap((p) => p.isolation.noisyGroups))];
  const noisyFromMs = Math.min(...present.map((p) => p.isolation.noisyFromMs));
  const plans = [...new Set(present.flatMap((p) => Object.keys(p.isolation.tiers)))];
  const stretches: Record<string, { before: IsolationStretch; after: IsolationStretch }> = {};
  for (const plan of plans) {
    const before: { s: IsolationStretch; where: string }[] = [];
    const after: { s: IsolationStretch; where: string }[] = [];
    for (const p of present) {
      const tier = p.isolation.tiers[plan];
      if (!tier) continue;
      before.push({ s: tier.before, where: `${p.where}.tiers.${plan}.before` });
      after.push({ s: tier.after, where: `${p.where}.tiers.${plan}.after` });
    }
    stretches[plan] = { before: addStretches(before), after: addStretches(after) };
  }
  return judgeIsolation(groups, noisyFromMs, stretches);
}

function addStretches(parts: { s: IsolationStretch; where: string }[]): IsolationStretch {
  const response = newHistogram();
  const counts = { requests: 0, rateLimited: 0, errors: 0 };
  for (const { s, where } of parts) {
    counts.requests += s.requests;
    counts.rateLimited += s.rateLimited;
    counts.errors += s.errors;
    response.add(decodeOrRefuse(s.histogram, `${where}.histogram`));
  }
  return isolationStretch(counts, response);
}
