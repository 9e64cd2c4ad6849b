import {
  encodeHistogram,
  type Histogram,
  type LatencyStats,
  latencyStats,
  newHistogram,
} from '../record/histogram.ts';
import type { OperationSummary } from '../result/types.ts';
import { decodeOrRefuse } from './decode-histogram.ts';
import { workloadRequests } from './run-span.ts';

export interface SummaryPart {
  summary: OperationSummary;
  /** The part's workload span, seconds: its rate times this is its request count. */
  seconds: number;
  /** Where the summary is, for messages: `result 2: operations.listPets`. */
  where: string;
}

export function addCounts(
  into: Record<string, number>,
  from: Record<string, number>,
): Record<string, number> {
  for (const [key, n] of Object.entries(from)) into[key] = (into[key] ?? 0) + n;
  return into;
}

/**
 * Statistics of the summed histogram, but min and max from the parts: each part read them from its
 * histogram in memory, to the microsecond, and the encoded form keeps only the bucket (up to 0.1%
 * higher). The extremes of all samples are the extremes of the parts' extremes, exactly.
 */
export function mergedStats(sum: Histogram, parts: LatencyStats[]): LatencyStats {
  const stats = latencyStats(sum);
  const measured = parts.filter((s) => s.count > 0);
  if (measured.length === 0) return stats;
  const max = Math.max(...measured.map((s) => s.max));
  // latencyStats caps percentiles at the histogram's max, which decoding rounds up to its bucket:
  // cap them at the exact max instead, as a run's own figures are.
  const cap = (x: number) => Math.min(x, max);
  return {
    ...stats,
    p50: cap(stats.p50),
    p75: cap(stats.p75),
    p90: cap(stats.p90),
    p95: cap(stats.p95),
    p99: cap(stats.p99),
    'p99.9': cap(stats['p99.9']),
    min: Math.min(...measured.map((s) => s.min)),
    max,
  };
}

/**
 * One summary of several parts: counters summed, histograms added and their statistics read again
 * from the sum, so that percentiles are those of all samples together (to the histogram's precision),
 * never an average of percentiles. `rate` is requests per second over `coveredSeconds`, the time when
 * at least one part ran: parts that ran at once add their rates, parts that ran one after another
 * average them, and a gap between them counts for nothing.
 */
export function mergeSummaries(parts: SummaryPart[], coveredSeconds: number): OperationSummary {
  const service = newHistogram();
  const response = newHistogram();
  const add = (into: Histogram, encoded: string, where: string) => into.add(decodeOrRefuse(encoded, where));
  let duringWorkload = 0;
  const merged = {
    requests: 0,
    statuses: {} as Record<string, number>,
    rateLimited: 0,
    refusals: {} as Record<string, number>,
    retries: 0,
    transportErrors: {} as Record<string, number>,
    protocols: {} as Record<string, number>,
    pacingWaitMs: 0,
    backoffWaitMs: 0,
    checkFailures: 0,
  };
  for (const { summary: s, seconds, where } of parts) {
    merged.requests += s.requests;
    addCounts(merged.statuses, s.statuses);
    merged.rateLimited += s.rateLimited;
    // A part written before refusals had statuses counted its refusals as 429s.
    addCounts(merged.refusals, s.refusals ?? (s.rateLimited > 0 ? { 429: s.rateLimited } : {}));
    merged.retries += s.retries;
    addCounts(merged.transportErrors, s.transportErrors);
    addCounts(merged.protocols, s.protocols ?? {});
    merged.pacingWaitMs += s.pacingWaitMs;
    merged.backoffWaitMs += s.backoffWaitMs;
    merged.checkFailures += s.checkFailures;
    duringWorkload += workloadRequests(s, seconds);
    add(service, s.histograms.service, `${where}.histograms.service`);
    add(response, s.histograms.response, `${where}.histograms.response`);
  }
  return {
    requests: merged.requests,
    rate: coveredSeconds > 0 ? duringWorkload / coveredSeconds : 0,
    statuses: merged.statuses,
    rateLimited: merged.rateLimited,
    rateLimitedRate: merged.requests ? merged.rateLimited / merged.requests : 0,
    refusals: merged.refusals,
    retries: merged.retries,
    transportErrors: merged.transportErrors,
    protocols: merged.protocols,
    pacingWaitMs: merged.pacingWaitMs,
    backoffWaitMs: merged.backoffWaitMs,
    checkFailures: merged.checkFailures,
    service: mergedStats(
      service,
      parts.map((p) => p.summary.service),
    ),
    response: mergedStats(
      response,
      parts.map((p) => p.summary.response),
    ),
    histograms: { service: encodeHistogram(service), response: encodeHistogram(response) },
  };
}
