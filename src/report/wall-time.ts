import type { RunResult } from '../result/types.ts';

/** Below this, setup and teardown are no news beside the load's span. */
const WORTH_SAYING_S = 0.05;

const secs = (s: number) => `${(Math.round(s * 10) / 10).toFixed(1)} s`;

/**
 * The run's wall time in its parts, when setup or teardown took any: `wall time 27.1 s: setup
 * 11.2 s, load 10.8 s, teardown 5.1 s`. The load's is the span the figures are over; the others
 * are what a user waited besides (paced at the plan's rate, they can outlast the load).
 */
export function wallTimeLine(result: RunResult): string | undefined {
  const { setupSeconds = 0, teardownSeconds = 0, durationSeconds } = result.meta;
  if (setupSeconds + teardownSeconds < WORTH_SAYING_S) return undefined;
  const wall = setupSeconds + durationSeconds + teardownSeconds;
  return `wall time ${secs(wall)}: setup ${secs(setupSeconds)}, load ${secs(durationSeconds)}, teardown ${secs(teardownSeconds)}`;
}
