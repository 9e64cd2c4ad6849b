import type { OperationSummary, RunResult } from '../result/types.ts';
import { decimal } from './format.ts';

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

/** Iterations completed, yet the workload sent no request (setup's and teardown's are not its own). */
export function workloadSentNothing(result: RunResult): boolean {
  return result.workload.iterations > 0 && workloadRequests(result.overall, runSpan(result).seconds) === 0;
}

/**
 * The span every rate of a run is over, as the page names it: the load, from its start to its last
 * answer, setup and teardown apart (their requests count in the totals, not in the rates).
 */
export const loadSpanText = (result: RunResult): string => `the load's ${decimal(runSpan(result).seconds)} s`;
