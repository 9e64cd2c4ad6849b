import { humanDuration } from '../api/duration.ts';
import type { RunConfig } from '../config/run.ts';

/**
 * Below this gap between two sends, setup's and teardown's pace adds little to a run's wall time
 * (the embedded server's free plan, ten times faster, is 100 ms).
 */
const NOTICEABLE_GAP_MS = 250;

/**
 * Said before a run starts whose setup or teardown the plan's pace makes slow, as against a
 * real-time target: they send at the plan's rate like the load (raw mode too), so each of their
 * requests adds a gap to the wall time, beyond the load's span. How many they send is the scenario's
 * code's to decide, so the pace is said, and the summary gives the spans.
 */
export function pacedPreparationLine(
  config: Pick<RunConfig, 'scenario' | 'planRate' | 'planName' | 'workload'>,
): string | undefined {
  const { setup, teardown } = config.scenario;
  if ((!setup && !teardown) || !(config.planRate > 0)) return undefined;
  const gapMs = 1000 / config.planRate;
  if (gapMs < NOTICEABLE_GAP_MS) return undefined;
  const phases = setup && teardown ? 'setup and teardown' : setup ? 'setup' : 'teardown';
  const gap = gapMs < 1000 ? `${Math.round(gapMs)} ms` : `${(gapMs / 1000).toFixed(1)} s`;
  const send = phases === 'setup and teardown' ? 'send' : 'sends';
  return `${phases} ${send} at plan ${config.planName}'s pace, one request every ${gap}: each of their requests adds about ${gap} to the run's wall time, beyond the load's ${humanDuration(config.workload.durationMs)}`;
}
