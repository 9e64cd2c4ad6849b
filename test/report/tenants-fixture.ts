import { encodeHistogram, latencyStats, newHistogram } from '../../src/record/histogram.ts';
import type { IsolationStretch, RunResult, TierSummary } from '../../src/result/types.ts';
import { judgeIsolation } from '../../src/stats/isolation.ts';

/**
 * A tenant mix's figures, made up for the views (terminal summary, HTML, markdown, JUnit): tiers
 * free and pro, a raw-mode named group `abusive` that starts at 5 s, and the isolation verdict
 * judged on synthetic histograms (broken: pro's tenants got 37 429s after it started).
 */

/** `requests` response times spread evenly over median ±50%, in µs. */
function histogramOf(medianMs: number, requests: number) {
  const h = newHistogram();
  for (let i = 0; i < requests; i++) h.recordValue(Math.round(medianMs * 1000 * (0.5 + i / requests)));
  return h;
}

export function tier(
  plan: string,
  figures: Partial<TierSummary> & { keys: number; requests: number; medianMs: number },
): TierSummary {
  const h = histogramOf(figures.medianMs, figures.requests);
  const encoded = encodeHistogram(h);
  const { medianMs: _, ...rest } = figures;
  return {
    plan,
    keysSeen: figures.keys,
    enforce: true,
    rate: figures.requests / 10,
    statuses: { '200': figures.requests },
    rateLimited: 0,
    rateLimitedRate: 0,
    violations: 0,
    errors: 0,
    errorRate: 0,
    service: latencyStats(h),
    response: latencyStats(h),
    histograms: { service: encoded, response: encoded },
    admitted: figures.requests,
    planRatePerKey: 1,
    utilization: { overall: 0.98, min: 0.91, p50: 0.985, max: 1 },
    admittedPerKey: Array.from({ length: figures.keys }, () => 1),
    ...rest,
  };
}

function stretch(medianMs: number, requests: number, rateLimited = 0): IsolationStretch {
  const h = histogramOf(medianMs, requests);
  const stats = latencyStats(h);
  return {
    requests,
    rateLimited,
    errors: 0,
    p50Ms: stats.p50,
    p99Ms: stats.p99,
    histogram: encodeHistogram(h),
  };
}

export function withTenants(result: RunResult, options: { broken?: boolean } = {}): RunResult {
  result.byPlan = {
    free: tier('free', { keys: 200, keysSeen: 198, requests: 12_000, medianMs: 1.8 }),
    pro: tier('pro', {
      keys: 50,
      requests: 3_000,
      medianMs: 2.1,
      rateLimited: options.broken ? 37 : 0,
      utilization: { overall: 0.97, min: 0.5, p50: 0.99, max: 1 },
    }),
  };
  result.byTenantGroup = {
    abusive: tier('free', { keys: 5, requests: 900, medianMs: 1.5, enforce: false, rateLimited: 640 }),
  };
  result.isolation = judgeIsolation(['abusive'], 5000, {
    free: { before: stretch(1.8, 6000), after: stretch(1.8, 6000) },
    pro: { before: stretch(2.1, 1500), after: stretch(2.1, 1500, options.broken ? 37 : 0) },
  });
  return result;
}
