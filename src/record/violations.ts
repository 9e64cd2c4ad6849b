import { keepsAway } from '../api/responses.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import type { AttemptRecord } from './attempt.ts';

/**
 * Counts requests sent inside a Retry-After window, from timestamps alone and independently of the
 * client's own bookkeeping: a client that honours Retry-After scores 0. A window opens when a 429
 * arrives and lasts its Retry-After; requests already in flight then were sent before it and do not
 * count. A 429 without Retry-After opens the pause the client chose for it (its backoff, or the
 * reset it was told): a headerless limiter is not a licence to hurry back.
 */
export class ViolationCounter {
  private readonly pauses = new Map<string, { from: number; until: number }[]>();
  count = 0;
  readonly samples: { operation: string; sentAt: number; pauseUntil: number }[] = [];

  /** Counts `a`; true when it was sent inside a pause of its key (a violation). */
  observe(a: AttemptRecord): boolean {
    const windows = this.pauses.get(a.keyLabel);
    let violation = false;
    if (windows) {
      for (let i = windows.length - 1; i >= 0; i--) {
        const w = windows[i] as { from: number; until: number };
        if (a.sentAt >= w.from && a.sentAt < w.until) {
          this.count++;
          violation = true;
          if (this.samples.length < 5)
            this.samples.push({ operation: a.operation.id, sentAt: a.sentAt, pauseUntil: w.until });
          break;
        }
      }
    }
    if (!keepsAway(a.kind)) return violation;
    const retryAfter = parseRetryAfter(a.headers?.['retry-after']);
    const until = retryAfter ? a.receivedAt + retryAfterDelayMs(retryAfter, a.receivedAt) : a.pauseUntil;
    if (until === undefined) return violation;
    const list = windows ?? [];
    list.push({ from: a.receivedAt, until });
    // Only recent windows can still contain a send; keep the list short.
    if (list.length > 64) list.splice(0, list.length - 64);
    this.pauses.set(a.keyLabel, list);
    return violation;
  }
}
