import type { Operation } from '../api/operations.ts';
import {
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  type RateWindow,
  scalePlan,
} from '../api/plans.ts';
import { loadSpec } from '../api/spec.ts';
import type { RunResult } from '../result/types.ts';
import type { Flow, Workload } from '../scenario/define.ts';
import { type ExecuteInput, executeScenario } from '../scenario/execute.ts';
import { resolveWorkload } from '../scenario/workload.ts';
import type { NetworkOptions } from '../transport/network.ts';

/** Runs one flow through the real `run` pipeline (client, pacing, recorder, checks) and returns the result. */
export async function runFlow(options: {
  url: string;
  plan: string;
  plans?: PlanTable;
  timeScale?: number;
  workload: Workload;
  flow: Flow<undefined>;
  /** The operation table, when the caller has it already (parsing the document costs CPU). */
  operations?: Operation[];
  /** The windows paced for, when not the plan's (a third-party limiter's own). */
  windows?: RateWindow[];
  /** Raw mode when false (default true). */
  enforce?: boolean;
  onWorkload?(running: boolean): void;
  /** Given once, when the run starts: its live recorder and pacing, as `run --metrics` reads them. */
  onLive?: ExecuteInput<undefined>['onLive'];
  /** TLS, HTTP/2 and a proxy, as `run`'s flags give them. */
  network?: NetworkOptions;
}): Promise<RunResult> {
  return runFlowObserved(options);
}

/**
 * runFlow with the pipeline's observers: `tap` sees every attempt as the recorder does (its send,
 * receive and due times, for benchmarks that compare the result with the raw timeline), `onTick` the
 * run so far once a second (progress of long runs). Otherwise the same run as runFlow.
 */
export async function runFlowObserved(
  options: Parameters<typeof runFlow>[0] & {
    tap?: ExecuteInput<undefined>['tap'];
    onTick?: ExecuteInput<undefined>['onTick'];
  },
): Promise<RunResult> {
  const operations = options.operations ?? (await loadSpec()).operations;
  const timeScale = options.timeScale ?? 1;
  const windows =
    options.windows ?? scalePlan(getPlan(options.plans ?? DEFAULT_PLANS, options.plan), timeScale).windows;
  return executeScenario({
    scenario: { name: 'bench', workload: options.workload, flows: [options.flow] },
    workload: resolveWorkload(options.workload, planRate(windows)),
    baseUrl: options.url,
    target: options.url,
    embeddedTarget: true,
    apiKey: `${options.plan}-demo-key`,
    operations,
    plan: options.plan,
    windows,
    timeScale,
    enforce: options.enforce ?? true,
    spec: 'built in',
    onWorkload: options.onWorkload,
    onLive: options.onLive,
    network: options.network,
    tap: options.tap,
    onTick: options.onTick,
  });
}
