import type { Plan } from '../../api/plans.ts';

/**
 * Without `--max-wait`: the plan's longest window as the target runs it, at least a minute (a block
 * of half a minute on a plan of 10 s windows is worth its wait) and at most ten (a day is not).
 */
export const MAX_WAIT_FLOOR_MS = 60_000;
export const MAX_WAIT_CAP_MS = 10 * 60_000;

/** The longest single wait a plan's probe accepts by default. */
export function defaultMaxWaitMs(scaled: Plan): number {
  const longest = Math.max(0, ...scaled.windows.map((w) => w.seconds * 1000));
  return Math.min(Math.max(longest, MAX_WAIT_FLOOR_MS), MAX_WAIT_CAP_MS);
}
