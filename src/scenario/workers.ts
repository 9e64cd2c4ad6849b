import { MessageChannel, Worker } from 'node:worker_threads';
import { InputError } from '../api/input-error.ts';
import { EXIT } from '../cli/exit-codes.ts';
import { QuotaHub } from '../client/port-quota-store.ts';
import { MemoryQuotaStore } from '../client/quota-store.ts';
import { mergeResults } from '../report/merge.ts';
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
  for (let index = 1; index <= count; index++) {
    const channel = new MessageChannel();
    hub?.serve(channel.port1);
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { job: { ...input.job, share: { index, count } }, quotaPort: channel.port2 },
      transferList: [channel.port2],
    });
    workers.push(worker);
  }
  const send = (worker: Worker | undefined, message: ToWorker) => worker?.postMessage(message);
  const broadcast = (message: ToWorker) => {
    for (const w of workers) send(w, message);
  };
  const onAbort = () => broadcast({ type: 'interrupt', signal: input.interruptedBy?.() ?? 'SIGINT' });
  input.signal?.addEventListener('abort', onAbort, { once: true });

  let done = 0;
  const results: RunResult[] = [];
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
                  break;
                case 'failed':
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
            worker.once('exit', () => resolve());
          }),
      ),
    );
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
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
  const merged = mergeResults(measured);
  merged.meta.workers = count;
  if (input.job.shard) merged.meta.shard = input.job.shard;
  if (input.job.quota.kind === 'redis') merged.meta.sharedQuota = input.job.quota.label;
  if (failure) {
    // What the other workers measured is kept, marked partial, with the reason.
    merged.meta.partial = true;
    merged.meta.interruptedBy = `a worker failed: ${failure.message}`;
  }
  return merged;
}
