import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { loadSpec } from '../api/spec.ts';
import { answerSnapshots } from '../result/thread-snapshots.ts';
import type { RunResult } from '../result/types.ts';
import { type BenchProgress, benchRun } from './bench-run.ts';
import type { BenchSettings } from './settings.ts';

/** Messages between threads.ts and a worker thread. */
export type ToWorker = { type: 'start' } | { type: 'stop'; interruptedBy: string | undefined };
export type FromWorker =
  | { type: 'ready' }
  | ({ type: 'progress' } & BenchProgress)
  | { type: 'result'; result: unknown }
  | { type: 'error'; message: string };

/**
 * One worker thread of `bench --workers N`: its share of the connections and of the rate, driven by
 * autocannon in this thread exactly as a single-threaded benchmark is, its own result posted back
 * for threads.ts to merge. It says when it is ready and starts when told, so that all start at once.
 */
if (parentPort) {
  const port = parentPort;
  const post = (message: FromWorker) => port.postMessage(message);
  const { settings, snapshotPort } = workerData as { settings: BenchSettings; snapshotPort: MessagePort };
  // The main thread asks for this thread's result so far (a second Ctrl-C).
  let snapshot: (() => RunResult | undefined) | undefined;
  answerSnapshots(snapshotPort, () => snapshot?.());
  const stop = new AbortController();
  let interruptedBy: string | undefined;
  let start: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  port.on('message', (message: ToWorker) => {
    if (message.type === 'start') start();
    else {
      interruptedBy = message.interruptedBy;
      stop.abort();
      start();
    }
  });
  let last: FromWorker;
  try {
    const { operations } = await loadSpec();
    post({ type: 'ready' });
    await started;
    const result = await benchRun(settings, operations, {
      signal: stop.signal,
      interruptedBy: () => interruptedBy,
      onProgress: (p) => post({ type: 'progress', ...p }),
      onSnapshot: (take) => {
        snapshot = take;
      },
    });
    last = { type: 'result', result };
  } catch (error) {
    last = { type: 'error', message: (error as Error).message };
  }
  // The last word: the main thread ends this thread once every thread's is in.
  snapshotPort.close();
  post(last);
}
