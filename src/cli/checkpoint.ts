import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKPOINT_FILE } from '../config/checkpoint.ts';
import { writeFileAtomic, writeRefusal } from '../io/atomic-write.ts';
import type { RunResult } from '../result/types.ts';

/** The run's result as it stands, marked so: partial, and a checkpoint rather than an interruption. */
export function asCheckpoint(result: RunResult): RunResult {
  result.meta.partial = true;
  result.meta.checkpoint = true;
  return result;
}

export interface CheckpointOptions {
  intervalMs: number;
  /** The result as it stands (undefined: nothing to write yet). */
  take(): RunResult | undefined | Promise<RunResult | undefined>;
  /** Where the run's outputs go; asked at each write, so that the final result lands beside it. */
  dirOf(result: RunResult): string;
}

/**
 * `run`'s checkpoints: every interval, the result so far written atomically to result.partial.json
 * in the output directory, so that a run killed outright (SIGKILL, the OOM killer) loses at most an
 * interval of what it measured; removed once the final result is written beside it. A write that
 * fails is said once, in words, and the run goes on: the checkpoint is insurance, not the output.
 */
export class Checkpoints {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private path: string | undefined;
  private refused = false;
  /** How long each write took, from asking for the result to the rename, ms. */
  readonly costs: number[] = [];
  private readonly o: CheckpointOptions;

  constructor(o: CheckpointOptions) {
    this.o = o;
  }

  start(): void {
    if (this.o.intervalMs <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      this.writing ??= this.write().finally(() => {
        this.writing = undefined;
      });
    }, this.o.intervalMs);
    // A checkpoint never keeps a finished run alive.
    this.timer.unref();
  }

  /** No more checkpoints; waits for one being written. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.writing;
  }

  /** The final result is in `dir`: the checkpoint beside it has done its job. */
  finish(dir: string | undefined): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.path && dir && join(dir, CHECKPOINT_FILE) === this.path) rmSync(this.path, { force: true });
  }

  private async write(): Promise<void> {
    const started = performance.now();
    let path = CHECKPOINT_FILE;
    try {
      const taken = await this.o.take();
      if (!taken || this.timer === undefined) return;
      const result = asCheckpoint(taken);
      path = join(this.o.dirOf(result), CHECKPOINT_FILE);
      writeFileAtomic(path, JSON.stringify(result));
      this.path = path;
      this.costs.push(performance.now() - started);
    } catch (error) {
      if (this.refused) return;
      this.refused = true;
      process.stderr.write(
        `petstore-load: cannot write the checkpoint to ${path}: ${writeRefusal(error)}; the run goes on without one\n`,
      );
    }
  }
}
