import { EXIT } from '../api/exit-codes.ts';
import { stopMetrics } from '../metrics/cli.ts';
import type { LiveMetrics, LiveMetricsOptions } from '../metrics/live-metrics.ts';
import type { RunResult } from '../result/types.ts';
import type { ServerProcess } from './embedded-server.ts';
import { Interrupt } from './interrupt.ts';
import { ProgressLine } from './progress.ts';

/** What a command's outputs came to: where result.json is (undefined: nowhere), and whether any output is not where it was asked for. */
export interface Outputs {
  path: string | undefined;
  failed: boolean;
}

export interface SessionOptions<W extends Outputs> {
  /** The command as its own lines name it ('capacity', 'bench'); empty for `run`, whose lines name none. */
  label: string;
  quiet: boolean;
  /** The command's outputs for a result: at its end, and on a second signal with what was measured so far. */
  write(result: RunResult): W;
}

/**
 * One command's life, the same in `run`, `capacity` and `bench`, so that each behaves alike however
 * it ends. A first Ctrl-C (or SIGTERM) ends the work early and what was measured is still written,
 * marked partial (exit 130); a second exits at once, after writing the result as it stands through
 * the command's own `write`. The servers it starts die with it, even if it never reaches its
 * cleanup. Its live metrics stop before the result is written, so that the last push carries the
 * result's totals. Made by `withSession`, which closes it whatever happens.
 */
export class Session<W extends Outputs> {
  readonly interrupt = new Interrupt();
  /** The live status line; cleared before anything else is printed. */
  readonly progress = new ProgressLine();
  private readonly options: SessionOptions<W>;
  private readonly servers: ServerProcess[] = [];
  private readonly cleanups: (() => unknown)[] = [];
  private metrics: LiveMetrics | undefined;
  private take: (() => RunResult | undefined) | undefined;
  private written = false;
  // 'exit' handlers must be synchronous: a kill, not a graceful stop.
  private readonly killServers = () => {
    for (const s of this.servers) s.child.kill();
  };

  constructor(options: SessionOptions<W>) {
    this.options = options;
    process.once('exit', this.killServers);
    this.interrupt.onForce(() => this.writeSoFar());
  }

  /** A server this command started: stopped at the end, killed if the process exits first. */
  own(server: ServerProcess): ServerProcess {
    if (this.servers.length === 0) this.defer(() => Promise.all(this.servers.map((s) => s.stop())));
    this.servers.push(server);
    return server;
  }

  /** Something to undo at the end, whatever happens: the last deferred is undone first. */
  defer(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  /**
   * The command's live metrics (undefined without `--metrics`), stopped before its result is written.
   * Their code (protobufjs, snappyjs) is loaded here, only when `--metrics` asked for them.
   */
  async useMetrics(options: LiveMetricsOptions | undefined): Promise<LiveMetrics | undefined> {
    if (!options) return undefined;
    const { LiveMetrics } = await import('../metrics/live-metrics.ts');
    this.metrics = new LiveMetrics(options);
    return this.metrics;
  }

  /** Given by the work once it runs: the result as it stands, for a second signal to write. */
  readonly onSnapshot = (take: () => RunResult | undefined): void => {
    this.take = take;
  };

  /**
   * A signal while the command was still starting (a server, a connection, setup): nothing was
   * measured, so nothing is written; one line says so, and the command exits 130.
   */
  stoppedEarly(): boolean {
    if (!this.interrupt.aborted) return false;
    process.stderr.write(
      `petstore-load: ${this.prefix}interrupted by ${this.interrupt.by} before it started: nothing measured\n`,
    );
    return true;
  }

  /**
   * The work is done: the status line cleared, and the last metrics push sent with the final
   * counters (the result keeps their `run_id`), before the result is written and the summary printed.
   */
  async endMeasuring(result: RunResult): Promise<void> {
    this.progress.clear();
    await stopMetrics(this.metrics, { interrupted: this.interrupt.aborted, quiet: this.options.quiet });
    if (this.metrics) result.meta.runId = this.metrics.runId;
  }

  /** The command's outputs, once; a second signal after them exits without writing over them. */
  write(result: RunResult): W {
    const outputs = this.options.write(result);
    this.written = true;
    return outputs;
  }

  /** Undoes everything, whatever stage the command reached; every cleanup runs even if one throws. */
  async close(): Promise<void> {
    this.progress.clear();
    await stopMetrics(this.metrics, { interrupted: true, quiet: this.options.quiet });
    // From here a Ctrl-C ends the process at once: a cleanup that hangs (a teardown against a stuck
    // target) is not waited for.
    this.interrupt.release();
    let failure: { error: unknown } | undefined;
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        failure ??= { error };
      }
    }
    process.removeListener('exit', this.killServers);
    if (failure) throw failure.error;
  }

  private get prefix(): string {
    return this.options.label ? `${this.options.label} ` : '';
  }

  /** A second signal's write: synchronous, since the process exits right after. */
  private writeSoFar(): void {
    if (this.written) return;
    const result = this.take?.();
    if (!result) return;
    result.meta.partial = true;
    if (this.interrupt.by) result.meta.interruptedBy = this.interrupt.by;
    const { path } = this.options.write(result);
    if (path)
      process.stderr.write(
        `petstore-load: ${this.prefix}interrupted again: the result so far is in ${path}\n`,
      );
  }
}

/** Opens a session, runs the command's work in it, and closes it whatever happens. */
export async function withSession<W extends Outputs>(
  options: SessionOptions<W>,
  work: (session: Session<W>) => Promise<number>,
): Promise<number> {
  const session = new Session(options);
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

/**
 * A command's exit code, most telling first: an interruption (the user's word), then the command's
 * own failure (a target that never answered, a setup that failed, a failed gate), then an output not
 * written where it was asked for. Never 0 for a command that could not do its job.
 */
export function exitCodeOf(o: {
  interrupted: boolean;
  failure?: number | undefined;
  writeFailed: boolean;
}): number {
  if (o.interrupted) return EXIT.INTERRUPTED;
  if (o.failure !== undefined) return o.failure;
  return o.writeFailed ? EXIT.WRITE_FAILED : EXIT.OK;
}
