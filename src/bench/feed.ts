import type { IncomingHttpHeaders } from 'node:http';
import type { Operation } from '../api/operations.ts';
import { readRateLimit } from '../api/rate-limit-dialect.ts';
import { classifyResponse, NO_REFUSAL_STATUSES, type RefusalStatuses } from '../api/responses.ts';
import { ResponseBody } from '../client/response-body.ts';
import type { Recorder } from '../record/recorder.ts';
import { backfillOmitted } from './coordinated-omission.ts';

/** autocannon hands headers as the server wrote their names, a repeated one as an array. */
export type RawHeaders = Record<string, string | string[] | undefined>;

/** Header names in lower case, as node:http gives them and the recorder reads them. */
function lowerCased(raw: RawHeaders | undefined): IncomingHttpHeaders | undefined {
  if (!raw) return undefined;
  const headers: IncomingHttpHeaders = {};
  for (const name in raw) headers[name.toLowerCase()] = raw[name];
  return headers;
}

/**
 * Turns autocannon's answers into the recorder's attempts (src/record/attempt.ts), so that the result
 * is built as `run`'s is: histograms, status counts, per-operation figures, the timeline. Every request
 * is a first attempt with no pacing or backoff (autocannon neither paces to a plan nor retries).
 */
export class BenchFeed {
  private readonly recorder: Recorder;
  /** The operation of each request of the cycle, by its index. */
  private readonly cycle: readonly Operation[];
  private readonly keyLabel: string;
  private readonly refusalStatuses: RefusalStatuses;

  constructor(
    recorder: Recorder,
    cycle: readonly Operation[],
    keyLabel: string,
    refusalStatuses: RefusalStatuses = NO_REFUSAL_STATUSES,
  ) {
    this.recorder = recorder;
    this.cycle = cycle;
    this.keyLabel = keyLabel;
    this.refusalStatuses = refusalStatuses;
  }

  /**
   * A response to the cycle's request `index`, received at `receivedAt` (epoch ms), `serviceMs` after
   * it was written. `intervalMs`: at a fixed rate, how often its connection meant to send (see
   * coordinated-omission.ts); the requests it skipped meanwhile are back-filled into response time.
   */
  response(
    index: number,
    status: number,
    text: string,
    headers: RawHeaders | undefined,
    receivedAt: number,
    serviceMs: number,
    intervalMs: number | undefined,
  ): void {
    const operation = this.cycle[index] as Operation;
    // Nothing reads a success's headers (no checks run in a benchmark): they are kept for the other
    // answers only, where they explain something (a 429's Retry-After opens a violation window).
    const lower = status >= 300 ? lowerCased(headers) : undefined;
    const body = new ResponseBody(text, lower);
    const view = lower ? readRateLimit(lower, receivedAt) : undefined;
    this.recorder.record({
      operation,
      attempt: 1,
      keyLabel: this.keyLabel,
      scheduledAt: undefined,
      sentAt: receivedAt - serviceMs,
      receivedAt,
      status,
      kind: classifyResponse({ status, headers: lower, view, body }, this.refusalStatuses),
      errorCode: undefined,
      headers: lower,
      body,
      pacingWaitMs: 0,
      backoffWaitMs: 0,
      retried: false,
    });
    if (intervalMs === undefined) return;
    const valueUs = Math.max(1, Math.round(serviceMs * 1000));
    const intervalUs = Math.round(intervalMs * 1000);
    if (valueUs < 2 * intervalUs) return;
    backfillOmitted(this.recorder.overall.response, valueUs, intervalUs);
    const stats = this.recorder.operations.get(operation.id);
    if (stats) backfillOmitted(stats.response, valueUs, intervalUs);
  }

  /** A request lost to a transport error (`code`: ECONNRESET, ETIMEDOUT, ...), sent at `sentAt`. */
  transportError(index: number, code: string, sentAt: number, receivedAt: number): void {
    this.recorder.record({
      operation: this.cycle[index] as Operation,
      attempt: 1,
      keyLabel: this.keyLabel,
      scheduledAt: undefined,
      sentAt,
      receivedAt,
      status: 0,
      kind: 'transport-error',
      errorCode: code,
      headers: undefined,
      body: new ResponseBody('', undefined),
      pacingWaitMs: 0,
      backoffWaitMs: 0,
      retried: false,
    });
  }
}
