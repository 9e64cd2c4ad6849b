import type { Operation } from '../src/api/operations.ts';
import {
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  type RateWindow,
  scalePlan,
} from '../src/api/plans.ts';
import { loadSpec } from '../src/api/spec.ts';
import type { ServerProcess } from '../src/cli/embedded-server.ts';
import { forkTied } from '../src/cli/tied-child.ts';
import type { RunResult } from '../src/result/types.ts';
import type { Flow, Workload } from '../src/scenario/define.ts';
import { type ExecuteInput, executeScenario } from '../src/scenario/execute.ts';
import { resolveWorkload } from '../src/scenario/workload.ts';

// Throughput benchmarks measure cost, not 429s: the same never-limiting enterprise plan as `bench`.
export { unlimitedPlansFile } from '../src/bench/unlimited-plans.ts';

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
    tap: options.tap,
    onTick: options.onTick,
  });
}

/**
 * Stops these servers when the benchmark is interrupted (SIGINT, SIGTERM) as well as when it ends:
 * call the returned function in a finally. A spawned server must never outlive its benchmark.
 */
export function stopOnExit(servers: ServerProcess[]): () => Promise<void> {
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of servers) s.child.kill('SIGTERM');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return async () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    // A server stopped already (or dead) has nothing to wait for: stop() would wait for an exit that came.
    await Promise.all(
      servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null).map((s) => s.stop()),
    );
  };
}

/**
 * Runs `script` (a benchmark file, with this process's loader flags: tsx) as a child process of its
 * own, so that its peak RSS is its own, and resolves with the one report it sends over IPC. The
 * child is killed if this process exits first, and exits by itself if this one is killed (forkTied:
 * the script calls exitWithParent first thing).
 */
export function forkReport<T>(
  script: string,
  args: string[],
  what: string,
  options: { execArgv?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = forkTied(script, args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: options.execArgv ?? process.execArgv,
      ...(options.env ? { env: options.env } : {}),
    });
    let report: T | undefined;
    proc.on('message', (m) => {
      report = m as T;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (report !== undefined && code === 0) resolve(report);
      else reject(new Error(`the child ${what} exited with ${code ?? signal}`));
    });
    // The parent interrupted: the child goes too.
    const kill = () => proc.kill('SIGTERM');
    process.once('exit', kill);
    proc.once('exit', () => process.removeListener('exit', kill));
  });
}
