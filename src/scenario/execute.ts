import { readFileSync } from 'node:fs';
import type { Operation } from '../api/operations.ts';
import type { RateWindow } from '../api/plans.ts';
import { ApiClient } from '../client/client.ts';
import { now } from '../client/clock.ts';
import type { AttemptRecord } from '../record/attempt.ts';
import { Recorder } from '../record/recorder.ts';
import { buildResult } from '../result/build.ts';
import type { RunResult } from '../result/types.ts';
import type { Scenario } from './define.ts';
import { runScenario } from './engine.ts';
import type { ResolvedWorkload } from './workload.ts';

/** The version users installed, from package.json, so results name it without a second copy to update. */
export const TOOL_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

export interface ExecuteInput<D> {
  scenario: Scenario<D>;
  workload: ResolvedWorkload;
  /** Base URL as the client uses it; `target` is what the result shows (no credentials). */
  baseUrl: string;
  target: string;
  embeddedTarget: boolean;
  apiKey: string | undefined;
  operations: Operation[];
  plan: string;
  /** The plan's windows as the target counts them. */
  windows: RateWindow[];
  timeScale: number;
  enforce: boolean;
  allowBanRisk?: boolean;
  timeoutMs?: number;
  maxAttempts?: number;
  spec: string;
  /** SIGINT/SIGTERM: aborting it ends the run early with a partial result. */
  signal?: AbortSignal;
  interruptedBy?(): string | undefined;
  seed?: number;
  /** Sees every attempt before the recorder does (tests and tools that need raw attempts). */
  tap?(attempt: AttemptRecord): void;
  /** Told when the workload starts and stops (benchmarks measure CPU over exactly that span). */
  onWorkload?(running: boolean): void;
}

/**
 * One run from scenario to result: a client and a recorder wired together, the workload driven
 * through them, the result built. The CLI, the tests and the benchmarks all run through here, so
 * what they measure is what users run.
 */
export async function executeScenario<D>(input: ExecuteInput<D>): Promise<RunResult> {
  const recorder = new Recorder({ startedAt: now(), windows: input.windows, workloadOnly: true });
  const tap = input.tap;
  const client = new ApiClient({
    baseUrl: input.baseUrl,
    apiKey: input.apiKey,
    keyLabel: input.plan,
    operations: input.operations,
    windows: input.windows,
    enforce: input.enforce,
    allowBanRisk: input.allowBanRisk,
    timeoutMs: input.timeoutMs,
    maxAttempts: input.maxAttempts,
    connections: Math.max(1, Math.min(256, input.workload.maxInFlight)),
    sink: tap
      ? {
          record: (attempt) => {
            tap(attempt);
            recorder.record(attempt);
          },
        }
      : recorder,
  });
  try {
    const output = await runScenario({
      scenario: input.scenario,
      workload: input.workload,
      client,
      signal: input.signal ?? new AbortController().signal,
      seed: input.seed,
      onWorkload: (running) => {
        recorder.measure(running, now());
        input.onWorkload?.(running);
      },
    });
    const interruptedBy = input.interruptedBy?.();
    return buildResult({
      meta: {
        toolVersion: TOOL_VERSION,
        nodeVersion: process.version,
        scenario: input.scenario.name,
        ...(input.scenario.description ? { description: input.scenario.description } : {}),
        target: input.target,
        embeddedTarget: input.embeddedTarget,
        plan: input.plan,
        startedAt: new Date(output.startedAt).toISOString(),
        endedAt: new Date(output.endedAt).toISOString(),
        partial: output.interrupted,
        ...(interruptedBy ? { interruptedBy } : {}),
      },
      config: {
        workload: input.workload.describe,
        enforce: input.enforce,
        allowBanRisk: input.allowBanRisk ?? false,
        timeScale: input.timeScale,
        windows: input.windows,
        timeoutMs: input.timeoutMs ?? 10_000,
        maxAttempts: input.maxAttempts ?? 3,
        spec: input.spec,
        ...(input.seed === undefined ? {} : { seed: input.seed }),
      },
      recorder,
      operations: input.operations,
      workload: output.workload,
    });
  } finally {
    await client.close();
  }
}
