import { randomBytes } from 'node:crypto';
import type { RateWindow } from '../api/plans.ts';
import { type LiveRun, RecorderSource } from './from-recorder.ts';
import { type PushReport, RemoteWriteQueue } from './push.ts';
import type { SinkSpec } from './sinks.ts';

export interface LiveMetricsOptions {
  sinks: readonly SinkSpec[];
  intervalMs: number;
  /**
   * Labels on every series: scenario, target, plan. The run_id is made here (`runId`), and one given
   * would be overridden without a word: a type error instead.
   */
  identity: Readonly<Record<string, string>> & { readonly run_id?: never };
  /** The run plan's windows as the target counts them. */
  windows: readonly RateWindow[];
  /** Queue bound per sink, samples. */
  maxQueuedSamples?: number;
}

/**
 * A run's live metrics: every interval the recorder is read once and the series offered to each
 * sink. The timer never keeps the process alive and nothing here throws into the run.
 */
export class LiveMetrics {
  private readonly queues: RemoteWriteQueue[];
  private source: RecorderSource | undefined;
  /** Labels of the current source's series beyond the identity's (`step`), none for a single run. */
  private labels: Readonly<Record<string, string>> = {};
  private timer: NodeJS.Timeout | undefined;
  private lastAt = 0;
  private collectError: string | undefined;

  /** The `run_id` label on every series, which the result keeps as `meta.runId` to find them by. */
  readonly runId = randomBytes(6).toString('hex');
  private readonly options: LiveMetricsOptions;

  constructor(options: LiveMetricsOptions) {
    this.options = options;
    const identity = { ...options.identity, run_id: this.runId };
    this.queues = options.sinks.map(
      (sink, i) =>
        new RemoteWriteQueue({
          endpoint: sink.endpoint,
          identity,
          sinkLabel: String(i + 1),
          ...(options.maxQueuedSamples === undefined ? {} : { maxQueuedSamples: options.maxQueuedSamples }),
        }),
    );
  }

  /**
   * The run started: its recorder is read from now on.
   *
   * A command that runs several recorders one after another (`capacity --tenants`: a warm-up, then
   * one run per step) calls it again for each, with `labels` that tell them apart (`step`). Re-pointing
   * under the same labels would restart every counter at 0 in the same series: Prometheus' rate() and
   * increase() take a drop as a counter reset and survive it, but the last value would no longer be a
   * total and the previous recorder's figures would be lost to an instant query. With a label of
   * their own, each recorder's series start at 0 and only ever rise, and each ends at exactly its own
   * result's figures; the previous recorder's final figures are collected before the switch. The same
   * labels twice (or none, as `run` calls it) is one recorder: ignored.
   */
  start(live: LiveRun, labels: Readonly<Record<string, string>> = {}): void {
    if (this.source) {
      if (sameLabels(labels, this.labels)) return;
      this.collect();
    }
    this.source = new RecorderSource(live, this.options.windows, Date.now());
    this.labels = labels;
    if (this.timer) return;
    this.timer = setInterval(() => this.collect(), this.options.intervalMs);
    this.timer.unref();
  }

  private collect(): void {
    if (!this.source) return;
    // One clock read per collection; a series' timestamps must rise, even two collections in one ms.
    const at = Math.max(Date.now(), this.lastAt + 1);
    this.lastAt = at;
    try {
      const own = this.source.collect(at);
      const extra = this.labels;
      const series =
        Object.keys(extra).length === 0 ? own : own.map((s) => ({ ...s, labels: { ...s.labels, ...extra } }));
      for (const queue of this.queues) queue.offer(series, at);
    } catch (error) {
      this.collectError = (error as Error).message;
    }
  }

  /**
   * The run ended: a last collection, so the final counters are the result's, then each sink gets
   * until `deadlineMs` to send what it holds. One line per sink for the user.
   */
  async stop(deadlineMs: number): Promise<{ text: string; dropped: number }[]> {
    clearInterval(this.timer);
    if (!this.source) return [];
    this.collect();
    this.source = undefined;
    const reports = await Promise.all(this.queues.map((q) => q.drain(deadlineMs)));
    return reports.map((report, i) => ({
      text: this.line(this.options.sinks[i] as SinkSpec, report),
      dropped: report.droppedSamples,
    }));
  }

  private line(sink: SinkSpec, r: PushReport): string {
    const pushed = `metrics: pushed ${r.pushedSamples} samples to ${sink.kind} at ${sink.host} (run_id ${this.runId})`;
    const why = [r.dropReason, r.lastError].filter((s, i, all) => s && all.indexOf(s) === i);
    const dropped = r.droppedSamples > 0 ? `, dropped ${r.droppedSamples} samples (${why.join(': ')})` : '';
    // A collection that failed is a bug of ours, not the endpoint's: said, not hidden.
    const failed = this.collectError ? `; reading the run failed: ${this.collectError}` : '';
    return pushed + dropped + failed;
  }
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
