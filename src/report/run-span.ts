import type { OperationSummary, RunResult } from '../result/types.ts';

/** The workload's span in epoch ms, and its length in seconds as build.ts divides by it. */
export function runSpan(result: RunResult): { start: number; end: number; seconds: number } {
  const start = Date.parse(result.meta.startedAt);
  const end = Date.parse(result.meta.endedAt);
  return { start, end, seconds: Math.max(0.001, (end - start) / 1000) };
}

/**
 * Requests sent while the workload ran: the result keeps only their rate, which build.ts made by
 * dividing this whole number by the span, so rounding recovers it exactly.
 */
export function workloadRequests(summary: OperationSummary, seconds: number): number {
  return Math.round(summary.rate * seconds);
}
