import { Agent } from 'undici';
import { FAMILIES } from './families.ts';
import {
  type Batch,
  encodeBatch,
  encodeMetadata,
  postWriteRequest,
  type RemoteWriteEndpoint,
  writeRequestBody,
} from './remote-write.ts';
import type { Series } from './series.ts';

export interface PushOptions {
  endpoint: RemoteWriteEndpoint;
  /** Labels on every series: the run's identity. */
  identity: Readonly<Record<string, string>>;
  /** Samples held while the endpoint does not take them; beyond it the oldest are dropped. */
  maxQueuedSamples?: number;
  /** Samples in one POST at most (a queue that built up is sent in several). */
  maxSamplesPerPost?: number;
  /** One POST's limit. */
  timeoutMs?: number;
  /**
   * Names this sink's own dropped-samples series (`sink`: its position among --metrics): two sinks
   * feeding one store must not send one series two values at one time.
   */
  sinkLabel?: string;
}

export interface PushReport {
  pushedSamples: number;
  droppedSamples: number;
  failedPushes: number;
  /** Why the last push failed: the endpoint's word or the transport's code. */
  lastError: string | undefined;
  /** Why samples were dropped last: the queue was full, the run ended first, the endpoint refused them. */
  dropReason: string | undefined;
}

export const DEFAULT_MAX_QUEUED_SAMPLES = 200_000;
const DEFAULT_MAX_SAMPLES_PER_POST = 20_000;
const DEFAULT_TIMEOUT_MS = 10_000;
const METADATA = encodeMetadata(Object.values(FAMILIES));

/**
 * One remote-write endpoint: batches queued in order, at most one POST in flight, a failed POST's
 * batches put back at the head and tried again with the next batch, the oldest dropped (and counted)
 * beyond the bound. Nothing here throws or is awaited by the run: `offer` only queues and starts a
 * POST if none is in flight.
 */
export class RemoteWriteQueue {
  /** Batches waiting, oldest first; those of the POST in flight are in `sending`. */
  private queue: Batch[] = [];
  private queued = 0;
  private sending: Batch[] = [];
  private inFlight: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly agent = new Agent({ connections: 1 });
  private readonly bound: number;
  private readonly perPost: number;
  private readonly timeoutMs: number;
  private stopped = false;
  /** POSTs started, so that `drain` knows whether a failure was its own try. */
  private posts = 0;
  readonly report: PushReport = {
    pushedSamples: 0,
    droppedSamples: 0,
    failedPushes: 0,
    lastError: undefined,
    dropReason: undefined,
  };
  private readonly options: PushOptions;

  constructor(options: PushOptions) {
    this.options = options;
    this.bound = options.maxQueuedSamples ?? DEFAULT_MAX_QUEUED_SAMPLES;
    this.perPost = options.maxSamplesPerPost ?? DEFAULT_MAX_SAMPLES_PER_POST;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Queues a collection (with this sink's own dropped-samples counter) and sends if it can. */
  offer(series: readonly Series[], timestampMs: number): void {
    if (this.stopped) return;
    // The counter says what was dropped before this batch; the batch itself may be dropped later.
    const own: Series = {
      name: FAMILIES.droppedSamples.name,
      labels: { sink: this.options.sinkLabel ?? '1' },
      value: this.report.droppedSamples,
    };
    this.enqueue([encodeBatch([...series, own], this.options.identity, timestampMs)], false);
    this.send();
  }

  /** Sends what is queued until it is empty, a POST fails or `deadlineMs` passes; then stops for good. */
  async drain(deadlineMs: number): Promise<PushReport> {
    const timer = setTimeout(() => this.abort.abort(), Math.max(0, deadlineMs));
    const postsBefore = this.posts;
    try {
      while (!this.abort.signal.aborted) {
        this.send();
        if (!this.inFlight) break;
        const failed = this.report.failedPushes;
        // A POST started before the end may fail where the end's own (the final counters) would not.
        const ours = this.posts > postsBefore;
        await this.inFlight;
        // One try at the end: an endpoint that just failed is not hammered until the deadline.
        if (ours && this.report.failedPushes > failed) break;
      }
    } finally {
      clearTimeout(timer);
      this.stopped = true;
      await this.inFlight;
      this.drop(this.queue.length, 'not sent by the end of the run');
      await this.agent.destroy().catch(() => undefined);
    }
    return this.report;
  }

  /** Adds batches (at the head: a failed POST's, which are older than any queued) within the bound. */
  private enqueue(batches: Batch[], atHead: boolean): void {
    this.queue = atHead ? [...batches, ...this.queue] : [...this.queue, ...batches];
    for (const b of batches) this.queued += b.samples;
    // The oldest go first: counters and cumulative buckets carry everything before them, so the
    // newest samples lose the least.
    let n = 0;
    while (this.queued > this.bound && n < this.queue.length - 1) {
      this.queued -= (this.queue[n] as Batch).samples;
      this.report.droppedSamples += (this.queue[n] as Batch).samples;
      n++;
    }
    if (n > 0) {
      this.queue.splice(0, n);
      this.noteDrop('queue full');
    }
  }

  /** Every reason samples were dropped, in order: a full queue is not hidden by the end's. */
  private noteDrop(why: string): void {
    const said = this.report.dropReason;
    if (said === undefined) this.report.dropReason = why;
    else if (!said.split('; ').includes(why)) this.report.dropReason = `${said}; ${why}`;
  }

  private drop(batches: number, why: string): void {
    if (batches <= 0) return;
    for (const batch of this.queue.splice(0, batches)) {
      this.queued -= batch.samples;
      this.report.droppedSamples += batch.samples;
    }
    this.noteDrop(why);
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0 || this.abort.signal.aborted) return;
    let count = 0;
    let samples = 0;
    // At least one batch, however large.
    while (
      count < this.queue.length &&
      (count === 0 || samples + (this.queue[count] as Batch).samples <= this.perPost)
    )
      samples += (this.queue[count++] as Batch).samples;
    this.sending = this.queue.splice(0, count);
    this.queued -= samples;
    const body = writeRequestBody([METADATA, ...this.sending.map((b) => b.bytes)]);
    this.posts++;
    this.inFlight = postWriteRequest(this.options.endpoint, body, {
      dispatcher: this.agent,
      timeoutMs: this.timeoutMs,
      signal: this.abort.signal,
    })
      .then((outcome) => {
        const sent = this.sending;
        this.sending = [];
        this.inFlight = undefined;
        if (outcome.ok) {
          this.report.pushedSamples += samples;
          // Catching up after an outage: the next POST at once, not at the next tick.
          this.send();
          return;
        }
        this.report.failedPushes++;
        // A POST cut short by the end-of-run deadline says so, not "AbortError".
        this.report.lastError = this.abort.signal.aborted
          ? 'no answer before the end-of-run deadline'
          : outcome.reason;
        if (outcome.retry) {
          this.enqueue(sent, true);
          return;
        }
        this.report.droppedSamples += samples;
        this.noteDrop(outcome.reason);
      })
      .catch((error: unknown) => {
        // A fault of ours (encoding the next POST) must neither end the process nor stop the run.
        this.inFlight = undefined;
        this.report.failedPushes++;
        this.report.lastError = (error as Error).message;
      });
  }
}
