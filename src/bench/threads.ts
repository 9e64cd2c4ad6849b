import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Operation } from '../api/operations.ts';
import { mergeResults } from '../report/merge.ts';
import { ThreadSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import { type BenchProgress, type BenchRunOptions, benchConfig, benchRun } from './bench-run.ts';
import { shareOf } from './coordinated-omission.ts';
import { effectiveConnections } from './drive.ts';
import { type BenchSettings, describeBench } from './settings.ts';
import type { FromWorker, ToWorker } from './worker.ts';

/** A worker thread runs TypeScript as the CLI does (bin/petstore-load.js): tsx registered, then the module imported. */
function startWorker(settings: BenchSettings, snapshotPort: MessagePort): Worker {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, {
    eval: true,
    workerData: { settings, snapshotPort },
    transferList: [snapshotPort],
  });
}

/** Thread `i`'s share: connections and rate split as autocannon's own workers split them, the remainder to the first. */
export function threadShare(settings: BenchSettings, i: number): BenchSettings {
  const n = settings.workers;
  return {
    ...settings,
    connections: shareOf(settings.connections, n, i),
    rate: settings.rate === undefined ? undefined : shareOf(settings.rate, n, i),
  };
}

/**
 * `--workers N`: N worker threads, each driving autocannon over its share of the connections and the
 * rate and recording its own result, merged into one by `merge` (histograms added, counters summed,
 * timelines on the wall clock). autocannon's own `workers` option cannot be passed through: its
 * workers take per-request hooks only as files of CommonJS to require, and send only aggregates back,
 * so the per-request record the result is built from would be lost.
 */
async function inThreads(settings: BenchSettings, options: BenchRunOptions): Promise<RunResult> {
  const n = settings.workers;
  const channels = Array.from({ length: n }, () => new MessageChannel());
  const workers = channels.map((c, i) => startWorker(threadShare(settings, i), c.port2));
  const snapshots = new ThreadSnapshots(channels.map((c) => c.port1));
  const finished: RunResult[] = [];
  // A second Ctrl-C: each thread's result, finished or asked for now (a second at most).
  options.onSnapshot?.(() => {
    const parts = snapshots
      .askNow(1000)
      .map((answer, i) => finished[i] ?? answer)
      .filter((r) => r !== undefined);
    if (parts.length === 0) return undefined;
    const merged = asOneBenchmark(parts, settings);
    merged.meta.partial = true;
    return merged;
  });
  const progress: BenchProgress[] = workers.map(() => ({ requests: 0, rateLimited: 0, errors: 0, p99Ms: 0 }));
  const post = (message: ToWorker) => {
    for (const w of workers) w.postMessage(message);
  };
  let ready = 0;
  const stop = () => post({ type: 'stop', interruptedBy: options.interruptedBy?.() });
  options.signal?.addEventListener('abort', stop, { once: true });
  const ticker = options.onProgress
    ? setInterval(
        () =>
          options.onProgress?.(
            progress.reduce((sum, p) => ({
              requests: sum.requests + p.requests,
              rateLimited: sum.rateLimited + p.rateLimited,
              errors: sum.errors + p.errors,
              // The threads' histograms are apart until the merge: the worst thread's p99 meanwhile.
              p99Ms: Math.max(sum.p99Ms, p.p99Ms),
            })),
          ),
        1000,
      )
    : undefined;
  try {
    const results = await Promise.all(
      workers.map(
        (worker, i) =>
          new Promise<RunResult>((resolve, reject) => {
            worker.on('message', (message: FromWorker) => {
              if (message.type === 'ready') {
                // All start at once, so that their windows coincide and their rates add up.
                if (++ready === n)
                  post(
                    options.signal?.aborted ? { type: 'stop', interruptedBy: undefined } : { type: 'start' },
                  );
              } else if (message.type === 'progress') progress[i] = message;
              else if (message.type === 'result') {
                finished[i] = message.result as RunResult;
                snapshots.ended(i);
                resolve(finished[i]);
              } else reject(new Error(`bench worker ${i + 1}: ${message.message}`));
            });
            worker.on('error', reject);
            worker.on('exit', (code) =>
              reject(new Error(`bench worker ${i + 1} exited (${code}) without a result`)),
            );
          }),
      ),
    );
    return asOneBenchmark(results, settings);
  } finally {
    snapshots.close();
    if (ticker) clearInterval(ticker);
    options.signal?.removeEventListener('abort', stop);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The threads' results merged into one benchmark's. */
function asOneBenchmark(results: RunResult[], settings: BenchSettings): RunResult {
  const merged = mergeResults(results);
  // One benchmark, not N: the merge's note on its parts gives way to what was asked of all of them.
  merged.meta.scenario = 'bench';
  merged.meta.description = describeBench(settings, totalConnections(settings));
  merged.config = benchConfig(settings);
  return merged;
}

/** The benchmark in this thread, or in `settings.workers` threads merged into one result. */
export function benchAll(
  settings: BenchSettings,
  operations: readonly Operation[],
  options: BenchRunOptions = {},
): Promise<RunResult> {
  if (settings.workers <= 1) return benchRun(settings, operations, options);
  return inThreads(settings, options);
}

/** The connections a benchmark opens in all (autocannon opens no more than the rate's requests per second). */
export function totalConnections(settings: BenchSettings): number {
  if (settings.workers <= 1) return effectiveConnections(settings.connections, settings.rate);
  let total = 0;
  for (let i = 0; i < settings.workers; i++) {
    const share = threadShare(settings, i);
    total += effectiveConnections(share.connections, share.rate);
  }
  return total;
}
