import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { InputError } from '../api/input-error.ts';
import { EXIT } from '../cli/exit-codes.ts';
import { QuotaHub } from '../client/port-quota-store.ts';
import { MemoryQuotaStore } from '../client/quota-store.ts';
import { mergeResults } from '../report/merge.ts';
import { ThreadSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import { SetupError } from './engine.ts';
import type { FromWorker, ToWorker, WorkerJob } from './worker-job.ts';

// Scenarios and our sources are TypeScript: each worker registers tsx before loading its entry, as
// bin/petstore-load.js does for the main thread (a loader registered there does not reach workers).
const ENTRY = new URL('./worker-thread.ts', import.meta.url).href;
const BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(ENTRY)}); })`;

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

/**
 * `run --workers N`: N worker threads each run a share of the workload (rates divided, virtual users
 * split) through its own client and recorder, so that the generator uses N cores. The key's quota
 * stays one: the workers reserve every send from one store (the main thread's, or Redis with
 * --quota-store) and pause together after a 429. The first worker runs setup and teardown for all;
 * all start the workload together; their results are merged into one (histograms added).
 */
export async function runWorkers(input: WorkersInput): Promise<RunResult> {
  const { count } = input;
  const store = input.job.quota.kind === 'port' ? new MemoryQuotaStore() : undefined;
  const hub = store ? new QuotaHub(store) : undefined;
  const workers: Worker[] = [];
  const snapshotPorts: MessagePort[] = [];
  for (let index = 1; index <= count; index++) {
    const channel = new MessageChannel();
    hub?.serve(channel.port1);
    const snapshots = new MessageChannel();
    snapshotPorts.push(snapshots.port1);
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: {
        job: { ...input.job, share: { index, count } },
        quotaPort: channel.port2,
        snapshotPort: snapshots.port2,
      },
      transferList: [channel.port2, snapshots.port2],
    });
    workers.push(worker);
  }
  const results: RunResult[] = [];
  const snapshots = new ThreadSnapshots(snapshotPorts);
  // A finished worker's result is its last word; the others' are asked for.
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
  const send = (worker: Worker | undefined, message: ToWorker) => worker?.postMessage(message);
  const broadcast = (message: ToWorker) => {
    for (const w of workers) send(w, message);
  };
  const onAbort = () => broadcast({ type: 'interrupt', signal: input.interruptedBy?.() ?? 'SIGINT' });
  input.signal?.addEventListener('abort', onAbort, { once: true });

  let done = 0;
  const failures: { message: string; setup: boolean; unreachable?: boolean }[] = [];
  try {
    await Promise.all(
      workers.map(
        (worker, i) =>
          new Promise<void>((resolve) => {
            worker.on('message', (message: FromWorker) => {
              switch (message.type) {
                case 'setup-done':
                  broadcast({ type: 'start', data: message.data });
                  input.onWorkload?.();
                  break;
                case 'setup-failed':
                  broadcast({ type: 'abort', message: `setup failed in worker 1: ${message.message}` });
                  break;
                case 'workload-done':
                  // Teardown only once every worker's workload has ended: it may delete what they use.
                  if (++done === count) send(workers[0], { type: 'teardown' });
                  break;
                case 'result':
                  results[i] = message.result as RunResult;
                  snapshots.ended(i);
                  break;
                case 'failed':
                  snapshots.ended(i);
                  failures.push({
                    message: message.message,
                    setup: message.setup,
                    unreachable: message.unreachable === true,
                  });
                  // A worker that cannot go on must not leave the others waiting for it.
                  if (++done === count) send(workers[0], { type: 'teardown' });
                  break;
              }
            });
            worker.once('error', (error) => {
              failures.push({ message: `worker ${i + 1}: ${error.message}`, setup: false });
              resolve();
            });
            worker.once('exit', () => {
              snapshots.ended(i);
              resolve();
            });
          }),
      ),
    );
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
    snapshots.close();
    await store?.close();
  }
  const measured = results.filter(Boolean);
  const failure = failures[0];
  if (failure && (failure.setup || measured.length === 0))
    throw failure.setup
      ? new SetupError(failure.message)
      : failure.unreachable
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
