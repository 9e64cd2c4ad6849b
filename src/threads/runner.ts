import { type Transferable, Worker } from 'node:worker_threads';
import { NATIVE_TYPESCRIPT, tsxApi } from '../runtime/typescript.ts';

/**
 * The one place worker threads are started (`run --workers`, `bench --workers`): N threads on one
 * module, each with a job of its own; their messages relayed; each thread's outcome (its result, or
 * one line saying why there is none) collected in the threads' order; and no thread left behind.
 */

/** What one thread ends with: its result, or one line saying why there is none. */
export type ThreadOutcome<R, D = never> =
  | { ok: true; result: R }
  | { ok: false; message: string; detail?: D };

/** A thread's job: its workerData, and the ports it takes along (moved, not copied). */
export interface ThreadJob {
  data: unknown;
  transfer?: readonly Transferable[];
}

export interface ThreadsOptions<M, R, D = never> {
  /** The module each thread runs: TypeScript is fine, it is booted as the CLI boots its own. */
  module: URL;
  jobs: readonly ThreadJob[];
  /** How an error line names thread i: `${name} ${i + 1}`. */
  name: string;
  /** A message from thread i: its outcome (its last word), or undefined for anything else. */
  outcome(message: M, thread: number): ThreadOutcome<R, D> | undefined;
  /** Every message that is not an outcome, with the group to answer through. */
  relay?(message: M, thread: number, group: ThreadGroup<R, D>): void;
  /** Thread i has its outcome (its result, its failure, or its crash). */
  settled?(thread: number, outcome: ThreadOutcome<R, D>): void;
  /**
   * The first failure ends all: the other threads are terminated and `outcomes` rejects with its
   * line. Otherwise the others go on and every thread's outcome is returned.
   */
  failFast?: boolean;
  /** Aborted: every thread is terminated at once and `outcomes` rejects. */
  signal?: AbortSignal;
}

/** The run was aborted, or a thread failed with `failFast`: the message is one line. */
export class ThreadsError extends Error {}

export interface ThreadGroup<R, D = never> {
  readonly size: number;
  post(thread: number, message: unknown): void;
  broadcast(message: unknown): void;
  /** Threads not yet exited. */
  alive(): number;
  /**
   * Every thread's outcome, in the threads' order, once every thread has exited (a thread still
   * running once all have their outcome is terminated: its last word is in).
   */
  readonly outcomes: Promise<ThreadOutcome<R, D>[]>;
}

// Our sources are TypeScript: run from src/ (a clone after an edit) where Node does not strip types
// itself, each thread registers tsx before loading its module, as bin/petstore-load.js does for the
// main thread (a loader registered there does not reach threads). A scenario's own hooks are the
// thread's to register (src/runtime/typescript.ts, from loadScenario).
export function threadBoot(module: URL): string {
  const load = `import(${JSON.stringify(module.href)})`;
  // build/'s modules are JavaScript already.
  if (NATIVE_TYPESCRIPT || module.pathname.endsWith('.js')) return load;
  return `import(${JSON.stringify(tsxApi())}).then((m) => { m.register(); return ${load}; })`;
}

/** What a thread threw, in one line: the first line of its message, never its stack. */
function crashLine(error: unknown): string {
  // Node's own wording for this one names its internals; say what happened instead.
  if ((error as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'out of memory';
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0]?.trim() || 'no message';
}

/** Starts one thread per job at once; outcomes come in through the returned group. */
export function startThreads<M, R, D = never>(options: ThreadsOptions<M, R, D>): ThreadGroup<R, D> {
  return new Threads(options);
}

class Threads<M, R, D> implements ThreadGroup<R, D> {
  readonly size: number;
  readonly outcomes: Promise<ThreadOutcome<R, D>[]>;
  private readonly workers: Worker[];
  private readonly results: (ThreadOutcome<R, D> | undefined)[];
  private readonly exited = new Set<number>();
  private settledCount = 0;
  /** Why the run ends early (aborted, or a failure with failFast): what `outcomes` rejects with. */
  private ending: ThreadsError | undefined;
  private done: { resolve(o: ThreadOutcome<R, D>[]): void; reject(e: Error): void } | undefined;
  private readonly options: ThreadsOptions<M, R, D>;

  constructor(options: ThreadsOptions<M, R, D>) {
    this.options = options;
    this.workers = options.jobs.map(
      (job) =>
        new Worker(threadBoot(options.module), {
          eval: true,
          workerData: job.data,
          transferList: job.transfer ? [...job.transfer] : [],
        }),
    );
    this.size = this.workers.length;
    this.results = this.workers.map(() => undefined);
    this.outcomes = new Promise((resolve, reject) => {
      this.done = { resolve, reject };
    });
    for (const [i, worker] of this.workers.entries()) this.watch(worker, i);
    this.finish();
    if (options.signal?.aborted) this.onAbort();
    else options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  post(thread: number, message: unknown): void {
    this.workers[thread]?.postMessage(message);
  }

  broadcast(message: unknown): void {
    for (const w of this.workers) w.postMessage(message);
  }

  alive(): number {
    return this.size - this.exited.size;
  }

  private watch(worker: Worker, i: number): void {
    const label = `${this.options.name} ${i + 1}`;
    worker.on('message', (message: M) => {
      const outcome = this.options.outcome(message, i);
      if (outcome) this.settle(i, outcome);
      else this.options.relay?.(message, i, this);
    });
    worker.on('error', (error) =>
      this.settle(i, { ok: false, message: `${label} crashed: ${crashLine(error)}` }),
    );
    worker.once('exit', (code) => {
      this.settle(i, { ok: false, message: `${label} exited (code ${code}) without a result` });
      this.exited.add(i);
      this.finish();
    });
  }

  private settle(i: number, outcome: ThreadOutcome<R, D>): void {
    if (this.results[i] || this.ending) return;
    this.results[i] = outcome;
    this.settledCount++;
    this.options.settled?.(i, outcome);
    if (!outcome.ok && this.options.failFast) this.end(new ThreadsError(outcome.message));
    // Every last word is in: a thread that lingers (a socket, a timer) has nothing more to say.
    else if (this.settledCount === this.size) this.terminateAll();
  }

  private readonly onAbort = () => this.end(new ThreadsError(`${this.options.name} threads aborted`));

  private end(error: ThreadsError): void {
    this.ending ??= error;
    this.terminateAll();
  }

  private terminateAll(): void {
    for (const w of this.workers) void w.terminate();
  }

  /** Resolved once every thread has exited, not before: none is left behind. */
  private finish(): void {
    if (this.exited.size < this.size) return;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.ending) this.done?.reject(this.ending);
    else this.done?.resolve(this.results as ThreadOutcome<R, D>[]);
  }
}
