import type { RawHeaders } from './feed.ts';

/**
 * Pairs autocannon's two callbacks for one response: the request's `onResponse(status, body, context,
 * headers)`, which knows which request was answered (so its operation) and the headers, and the
 * instance's `response(client, status, bytes, responseTime)`, which knows how long it took (hrtime
 * from the request's write to the response's last byte).
 *
 * Why a one-slot mailbox is correct: when a response completes, autocannon's client
 * (lib/httpClient.js, kOnMessageComplete) takes the oldest request off its pipeline queue, calls that
 * request's `onResponse` (lib/requestIterator.js, recordBody) and at once, synchronously, emits its
 * `response` event, which lib/run.js relays as the instance's. Nothing can run between the two (one
 * thread, no await), and both happen or neither does (a destroyed client or a forced reconnect skips
 * both). So the last `onResponse` is the one the next `response` event belongs to, whatever the
 * connection or the pipelining depth: no lookup, no allocation. The status is compared as a guard; a
 * mismatch (a future autocannon that changed this order) is counted and the response left out,
 * never attributed to the wrong operation.
 */
export class ResponsePairer {
  /** Index in the cycle of the request last answered, -1 once taken. */
  private index = -1;
  private status = 0;
  body = '';
  headers: RawHeaders | undefined;
  /** `response` events that found no matching `onResponse`. */
  unpaired = 0;

  answered(index: number, status: number, body: string, headers: RawHeaders | undefined): void {
    this.index = index;
    this.status = status;
    this.body = body;
    this.headers = headers;
  }

  /** The cycle index the `response` event with this status belongs to, or -1 (counted in `unpaired`). */
  take(status: number): number {
    const index = this.index;
    this.index = -1;
    if (index < 0 || status !== this.status) {
      this.unpaired++;
      return -1;
    }
    return index;
  }
}
