import type { RunResult } from '../result/types.ts';

const secs = (s: number) => `${(Math.round(s * 10) / 10).toFixed(1)} s`;

/**
 * The run's wall time in its parts, whenever the scenario has a setup or teardown (those it has): `wall time 27.1 s: setup
 * 11.2 s, load 10.8 s, teardown 5.1 s`. Against a real-time plan of a request a second they can
 * outlast the load; on the embedded server's tenfold time they are a second beside ten. The load's is the span the figures are over; the others
 * are what a user waited besides (paced at the plan's rate, they can outlast the load).
 */
export function wallTimeLine(result: RunResult): string | undefined {
  const { setupSeconds, teardownSeconds, durationSeconds } = result.meta;
  if (setupSeconds === undefined && teardownSeconds === undefined) return undefined;
  const wall = (setupSeconds ?? 0) + durationSeconds + (teardownSeconds ?? 0);
  const parts = [
    setupSeconds === undefined ? '' : `setup ${secs(setupSeconds)}`,
    `load ${secs(durationSeconds)}`,
    teardownSeconds === undefined ? '' : `teardown ${secs(teardownSeconds)}`,
  ].filter(Boolean);
  return `wall time ${secs(wall)}: ${parts.join(', ')}`;
}
