import { MessageChannel } from 'node:worker_threads';
import type { Operation } from '../api/operations.ts';
import { mergeResults } from '../report/merge.ts';
import { ThreadSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import { startThreads } from '../threads/runner.ts';
import { type BenchProgress, type BenchRunOptions, benchConfig, benchRun } from './bench-run.ts';
import { shareOf } from './coordinated-omission.ts';
import { effectiveConnections } from './drive.ts';
import { type BenchSettings, describeBench } from './settings.ts';
import type { FromWorker, ToWorker } from './worker.ts';

const ENTRY = new URL('./worker.ts', import.meta.url);

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
  const channels = Array.from({ length: settings.workers }, () => new MessageChannel());
  const snapshots = new ThreadSnapshots(channels.map((c) => c.port1));
  const finished: RunResult[] = [];
  const progress: BenchProgress[] = channels.map(() => ({
    requests: 0,
    rateLimited: 0,
    errors: 0,
    p99Ms: 0,
  }));
  let ready = 0;
  const threads = startThreads<FromWorker, RunResult>({
    module: ENTRY,
    name: 'bench worker',
    jobs: channels.map((c, i) => ({
      data: { settings: threadShare(settings, i), snapshotPort: c.port2 },
      transfer: [c.port2],
    })),
    outcome: (message, i) =>
      message.type === 'result'
        ? { ok: true, result: message.result as RunResult }
        : message.type === 'error'
          ? { ok: false, message: `bench worker ${i + 1}: ${message.message}` }
          : undefined,
    relay: (message, i, group) => {
      if (message.type === 'progress') progress[i] = message;
      // All start at once, so that their windows coincide and their rates add up.
      else if (message.type === 'ready' && ++ready === group.size)
        group.broadcast(
          (options.signal?.aborted
            ? { type: 'stop', interruptedBy: undefined }
            : { type: 'start' }) satisfies ToWorker,
        );
    },
    settled: (i, outcome) => {
      if (outcome.ok) finished[i] = outcome.result;
      snapshots.ended(i);
    },
    // One thread's failure is the benchmark's: the others' part alone would misreport the rate.
    failFast: true,
  });
  offerSnapshot(settings, options, snapshots, finished);
  const stop = () =>
    threads.broadcast({ type: 'stop', interruptedBy: options.interruptedBy?.() } satisfies ToWorker);
  options.signal?.addEventListener('abort', stop, { once: true });
  const ticker = options.onProgress && progressTicker(progress, options.onProgress);
  try {
    await threads.outcomes;
    return asOneBenchmark(finished, settings);
  } finally {
    snapshots.close();
    if (ticker) clearInterval(ticker);
    options.signal?.removeEventListener('abort', stop);
  }
}

/** A second Ctrl-C: each thread's result, finished or asked for now (a second at most). */
function offerSnapshot(
  settings: BenchSettings,
  options: BenchRunOptions,
  snapshots: ThreadSnapshots,
  finished: RunResult[],
): void {
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
}

/** The threads' progress added up, once a second. */
function progressTicker(progress: BenchProgress[], onProgress: (p: BenchProgress) => void) {
  return setInterval(
    () =>
      onProgress(
        progress.reduce((sum, p) => ({
          requests: sum.requests + p.requests,
          rateLimited: sum.rateLimited + p.rateLimited,
          errors: sum.errors + p.errors,
          // The threads' histograms are apart until the merge: the worst thread's p99 meanwhile.
          p99Ms: Math.max(sum.p99Ms, p.p99Ms),
        })),
      ),
    1000,
  );
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
