import { Recorder } from '../../src/record/recorder.ts';
import { buildResult } from '../../src/result/build.ts';
import type { RunResult, ThresholdResult } from '../../src/result/types.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { runInProcess } from '../helpers/integration-run.ts';
import { syntheticConfig, syntheticMeta } from '../helpers/synthetic-result.ts';
import { FREE_WINDOWS, operations, T0 } from '../helpers/unit-attempt.ts';

/**
 * A short real run for the report tests: mixed-traffic (every operation, deprecated and beta ones
 * included) against the reference server with its Remaining header inflated by 10, so that
 * `ratelimit-remaining-bounds` fails and the report has failing samples to list. Time scale 30:
 * a free minute lasts 2 s, so 3 s of workload cross windows and pacing waits show on the timeline.
 */
export async function realRun(): Promise<RunResult> {
  const scenario = await loadScenario('mixed-traffic');
  const { result } = await runInProcess({
    scenario,
    server: { timeScale: 30, faults: { wrongRemaining: 10, jitterMs: 15, seed: 5 } },
    overrides: { durationMs: 3000 },
    seed: 3,
  });
  return result;
}

export const THRESHOLDS: ThresholdResult[] = [
  { expression: 'p99<500ms', source: 'scenario', actual: 21.4, passed: true },
  {
    expression: 'checks>99.9%',
    source: 'cli',
    actual: 97.4,
    passed: false,
    detail: '97.4% of checks passed, below 99.9%',
  },
];

/** A run that recorded nothing at all (every operation, chart and table empty), built as `run` builds one. */
export async function emptyResult(): Promise<RunResult> {
  const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
  return buildResult({
    meta: syntheticMeta({ scenario: 'empty', endedAt: new Date(T0 + 1000).toISOString() }),
    config: syntheticConfig({
      workload: { executor: 'constant-vus', vus: 1, durationMs: 1000, thinkMs: [0, 0] },
    }),
    recorder,
    operations: [...(await operations()).values()],
    workload: { iterations: 0, droppedIterations: 0, failedIterations: 0, flows: {} },
  });
}
