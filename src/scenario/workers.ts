import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { QuotaHub } from '../client/port-quota-store.ts';
import { MemoryQuotaStore } from '../client/quota-store.ts';
import { mergeResults } from '../report/merge.ts';
import { ThreadSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import { startThreads, type ThreadGroup, type ThreadJob, type ThreadOutcome } from '../threads/runner.ts';
import { SetupError } from './setup-teardown.ts';
import type { FromWorker, ToWorker, WorkerJob } from './worker-job.ts';

const ENTRY = new URL('./worker-thread.ts', import.meta.url);

export interface WorkersInput {
  /** The job as for one generator; each worker gets its share. */
  job: Omit<WorkerJob, 'share'>;
  count: number;
  signal?: AbortSignal;
  interruptedBy?(): string | undefined;
  /** Told when the workers start their workload together. */
  onWorkload?(): void;
  /**
   * Given once the workers start: the run's result as it stands, the workers' parts merged (each
   * finished worker's result, the others' asked for now), marked partial; undefined while no worker
   * has anything. `ask` for a checkpoint, `askNow` (blocking, at most `timeoutMs`) for a second signal.
   */
  onSnapshots?(snapshots: {
    ask(timeoutMs: number): Promise<RunResult | undefined>;
    askNow(timeoutMs: number): RunResult | undefined;
  }): void;
}

/** Why a worker has no result: a setup that failed, a quota store it could not reach, or anything else. */
interface Failure {
  setup: boolean;
  unreachable: boolean;
}
type Outcome = ThreadOutcome<RunResult, Failure>;

/**
 * `run --workers N`: N worker threads each run a share of the workload (rates divided, virtual users
 * split) through its own client and recorder, so that the generator uses N cores. The key's quota
 * stays one: the workers reserve every send from one store (the main thread's, or Redis with
 * --quota-store) and pause together after a 429. The first worker runs setup and teardown for all;
 * all start the workload together; their results are merged into one (histograms added).
 */
export async function runWorkers(input: WorkersInput): Promise<RunResult> {
  const store = input.job.quota.kind === 'port' ? new MemoryQuotaStore() : undefined;
  const hub = store ? new QuotaHub(store) : undefined;
  const { jobs, snapshotPorts } = workerJobs(input, hub);
  const snapshots = new ThreadSnapshots(snapshotPorts);
  const results: RunResult[] = [];
  // In the order they happened: the first is the one the run reports.
  const failures: { message: string; detail?: Failure }[] = [];
  const coordinate = coordinator(input);
  const threads = startThreads<FromWorker, RunResult, Failure>({
    module: ENTRY,
    jobs,
    name: 'worker',
    outcome: outcomeOf,
    relay: coordinate.relay,
    settled: (i, outcome) => {
      snapshots.ended(i);
      if (outcome.ok) results[i] = outcome.result;
      else {
        failures.push(outcome);
        // A worker that cannot go on must not leave the others waiting for it.
        coordinate.over(i, threads);
      }
    },
  });
  offerSnapshots(input, snapshots, results);
  const onAbort = () =>
    threads.broadcast({ type: 'interrupt', signal: input.interruptedBy?.() ?? 'SIGINT' } satisfies ToWorker);
  input.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await threads.outcomes;
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
    snapshots.close();
    await store?.close();
  }
  return verdict(results.filter(Boolean), failures[0], input);
}

/** Each worker's job and ports: its share, the quota hub's port, and a port to ask for its result so far. */
function workerJobs(input: WorkersInput, hub: QuotaHub | undefined) {
  const jobs: ThreadJob[] = [];
  const snapshotPorts: MessagePort[] = [];
  for (let index = 1; index <= input.count; index++) {
    const channel = new MessageChannel();
    hub?.serve(channel.port1);
    const snapshots = new MessageChannel();
    snapshotPorts.push(snapshots.port1);
    jobs.push({
      data: {
        job: { ...input.job, share: { index, count: input.count } },
        quotaPort: channel.port2,
        snapshotPort: snapshots.port2,
      },
      transfer: [channel.port2, snapshots.port2],
    });
  }
  return { jobs, snapshotPorts };
}

/** A worker's last word: its result, or why it has none. */
function outcomeOf(message: FromWorker): Outcome | undefined {
  if (message.type === 'result') return { ok: true, result: message.result as RunResult };
  if (message.type === 'failed')
    return {
      ok: false,
      message: message.message,
      detail: { setup: message.setup, unreachable: message.unreachable === true },
    };
  return undefined;
}

/**
 * Setup in the first worker, then the workload in all at once; teardown in the first again, only once
 * every worker's workload has ended (or the worker failed): it may delete what they use.
 */
function coordinator(input: WorkersInput) {
  const over = new Set<number>();
  const ended = (i: number, group: ThreadGroup<RunResult, Failure>) => {
    over.add(i);
    if (over.size === input.count) group.post(0, { type: 'teardown' } satisfies ToWorker);
  };
  return {
    relay(message: FromWorker, i: number, group: ThreadGroup<RunResult, Failure>) {
      switch (message.type) {
        case 'setup-done':
          group.broadcast({ type: 'start', data: message.data } satisfies ToWorker);
          input.onWorkload?.();
          break;
        case 'setup-failed':
          group.broadcast({
            type: 'abort',
            message: `setup failed in worker 1: ${message.message}`,
          } satisfies ToWorker);
          break;
        case 'workload-done':
          ended(i, group);
          break;
      }
    },
    over: ended,
  };
}

/** The run's result so far, for checkpoints and a second signal: a finished worker's result is its last word, the others' are asked for. */
function offerSnapshots(input: WorkersInput, snapshots: ThreadSnapshots, results: RunResult[]): void {
  const soFar = (answers: (RunResult | undefined)[]) => {
    const parts = answers.map((answer, i) => results[i] ?? answer).filter((r) => r !== undefined);
    if (parts.length === 0) return undefined;
    const merged = mergedRun(parts, input);
    merged.meta.partial = true;
    return merged;
  };
  input.onSnapshots?.({
    ask: async (timeoutMs) => soFar(await snapshots.ask(timeoutMs)),
    askNow: (timeoutMs) => soFar(snapshots.askNow(timeoutMs)),
  });
}

/** The merged result, or the error a failure comes to: a failed setup, or no worker's result at all. */
function verdict(
  measured: RunResult[],
  failure: { message: string; detail?: Failure } | undefined,
  input: WorkersInput,
): RunResult {
  if (failure && (failure.detail?.setup || measured.length === 0))
    throw failure.detail?.setup
      ? new SetupError(failure.message)
      : failure.detail?.unreachable
        ? new InputError(failure.message, EXIT.UNREACHABLE)
        : new Error(failure.message);
  const merged = mergedRun(measured, input);
  if (failure) {
    // What the other workers measured is kept, marked partial, with the reason.
    merged.meta.partial = true;
    merged.meta.interruptedBy = `a worker failed: ${failure.message}`;
  }
  return merged;
}

/** The workers' results as one run's: histograms added, and what the run was. */
function mergedRun(parts: RunResult[], input: WorkersInput): RunResult {
  const merged = mergeResults(parts);
  merged.meta.workers = input.count;
  if (input.job.shard) merged.meta.shard = input.job.shard;
  if (input.job.quota.kind === 'redis') merged.meta.sharedQuota = input.job.quota.label;
  return merged;
}
