import type { RunResult } from '../result/types.ts';

/**
 * Setup and teardown are news in the summary once they add a quarter to the load's span, or 5 s:
 * the embedded server's tenfold time makes theirs a second beside ten of load, a real-time plan of
 * a request a second as long as the load or longer.
 */
const NEWS_SHARE = 0.25;
const NEWS_SECONDS = 5;

const secs = (s: number) => `${(Math.round(s * 10) / 10).toFixed(1)} s`;

/**
 * The run's wall time in its parts, when setup and teardown added to it enough to ask why: `wall time 27.1 s: setup
 * 11.2 s, load 10.8 s, teardown 5.1 s`. The load's is the span the figures are over; the others
 * are what a user waited besides (paced at the plan's rate, they can outlast the load).
 */
export function wallTimeLine(result: RunResult): string | undefined {
  const { setupSeconds = 0, teardownSeconds = 0, durationSeconds } = result.meta;
  const around = setupSeconds + teardownSeconds;
  if (around < NEWS_SECONDS && around < durationSeconds * NEWS_SHARE) return undefined;
  const wall = setupSeconds + durationSeconds + teardownSeconds;
  return `wall time ${secs(wall)}: setup ${secs(setupSeconds)}, load ${secs(durationSeconds)}, teardown ${secs(teardownSeconds)}`;
}
