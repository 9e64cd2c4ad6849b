import { now, sleepUntil } from './clock.ts';
import type { Pacer } from './pacer.ts';

export interface Admission {
  /** Time spent waiting for pacing (quota spacing, the server's budget, in-flight limits), ms. */
  pacingWaitMs: number;
  /** Time spent waiting out a 429's pause, ms. */
  backoffWaitMs: number;
  /** The send's number in the pacer (recorded at admission), for `Pacer.observe`. */
  seq: number;
}

const PACING_TOLERANCE_MS = 1;

export class AbortedError extends Error {
  override readonly name = 'AbortedError';
}

/**
 * Admits the sends of one key one at a time, in arrival order, each when its Pacer allows, and
 * records each admitted send in the pacer. A single queue (not one timer per caller) is what makes
 * the spacing exact under any concurrency.
 */
export class Gate {
  private chain: Promise<unknown> = Promise.resolve();
  /** Callers queued and not yet admitted. */
  private waiting = 0;
  private responseWaiters: (() => void)[] = [];

  constructor(readonly pacer: Pacer) {}

  /** Call after `pacer.observe`, so a sender waiting for an answer can go on. */
  responded(): void {
    const waiters = this.responseWaiters;
    this.responseWaiters = [];
    for (const wake of waiters) wake();
  }

  /** `signal` is the caller's run: aborting it ends this wait with AbortedError. */
  acquire(signal: AbortSignal): Promise<Admission> {
    // Fast path: nobody queued and the pacer says go. Most sends of a run under its quota take it,
    // and it saves the queue's promises on the generator's hottest path.
    if (this.waiting === 0 && !signal.aborted) {
      const t = now();
      const { at, cause } = this.pacer.earliest(t);
      if (at <= t || (cause !== 'pause' && at - t < PACING_TOLERANCE_MS)) {
        return Promise.resolve({ pacingWaitMs: 0, backoffWaitMs: 0, seq: this.pacer.sent(t) });
      }
    }
    const queuedAt = now();
    this.waiting++;
    const admitted = this.chain.then(() => this.waitTurn(queuedAt, signal));
    this.chain = admitted.then(
      () => {
        this.waiting--;
      },
      () => {
        this.waiting--;
      },
    );
    return admitted;
  }

  private async waitTurn(queuedAt: number, signal: AbortSignal): Promise<Admission> {
    for (;;) {
      if (signal.aborted) throw new AbortedError('run stopped');
      const t = now();
      const { at, cause } = this.pacer.earliest(t);
      // A timer cannot wait less than about a millisecond; pacing's grid makes up for a send that
      // leaves that little early, and the quota logs carry a guard of several ms. A pause after a
      // 429 is never cut short.
      if (at <= t || (cause !== 'pause' && at - t < PACING_TOLERANCE_MS)) break;
      if (at === Number.POSITIVE_INFINITY) {
        await new Promise<void>((resolve) => {
          const done = () => {
            signal.removeEventListener('abort', done);
            resolve();
          };
          this.responseWaiters.push(done);
          signal.addEventListener('abort', done, { once: true });
        });
      } else {
        await sleepUntil(at, signal);
      }
    }
    const admittedAt = now();
    // Time this caller spent inside the key's latest pause counts as backoff, whether it waited at the
    // head of the queue or behind others; the rest of its wait was pacing.
    const { pausedFrom, pausedUntil } = this.pacer;
    const backoffWaitMs = Math.max(0, Math.min(admittedAt, pausedUntil) - Math.max(queuedAt, pausedFrom));
    // The send is recorded here, at admission, not by the caller afterwards: a caller admitted on the
    // fast path in the same tick must already see it.
    return {
      pacingWaitMs: admittedAt - queuedAt - backoffWaitMs,
      backoffWaitMs,
      seq: this.pacer.sent(admittedAt),
    };
  }
}
