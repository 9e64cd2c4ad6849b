import { now, sleepUntil } from './clock.ts';
import type { Pacer } from './pacer.ts';
import type { QuotaStore } from './quota-store.ts';

/** A quota shared with other generators: the store, and the key's name in it. */
export interface SharedQuota {
  store: QuotaStore;
  key: string;
}

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
 * A send that could not leave before the run closes (a server's Retry-After of years, a spent day):
 * it is not waited for. An AbortedError, since like the run's end it cuts the call short rather than
 * failing the flow.
 */
export class HeldPastEndError extends AbortedError {
  constructor(
    /** When the send could have left, epoch ms. */
    readonly until: number,
    readonly heldBy: ReturnType<Pacer['earliest']>['cause'],
  ) {
    super(`held until ${until}, after the run closes`);
  }
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
  /**
   * No send leaves after this time (epoch ms): the run's end, or its setup's or teardown's limit. A
   * send the pacer would hold beyond it fails at once with HeldPastEndError instead of sleeping.
   */
  closesAt = Number.POSITIVE_INFINITY;
  /** Interrupted: no new send leaves (AbortedError at once), while the ones in flight may answer. */
  draining = false;

  constructor(
    readonly pacer: Pacer,
    /** With other generators: every send also reserves its slot in the store, and heeds its pause. */
    private readonly shared?: SharedQuota,
  ) {}

  /** A 429's pause, for every generator of the key (the local pacer has it already). */
  async sharePause(ms: number): Promise<void> {
    await this.shared?.store.pause(this.shared.key, ms);
  }

  /** Call after `pacer.observe`, so a sender waiting for an answer can go on. */
  responded(): void {
    const waiters = this.responseWaiters;
    this.responseWaiters = [];
    for (const wake of waiters) wake();
  }

  /** `signal` is the caller's run: aborting it ends this wait with AbortedError. */
  acquire(signal: AbortSignal): Promise<Admission> {
    if (this.draining) return Promise.reject(new AbortedError('run stopped'));
    // Fast path: nobody queued and the pacer says go. Most sends of a run under its quota take it,
    // and it saves the queue's promises on the generator's hottest path.
    if (this.waiting === 0 && !signal.aborted && !this.shared) {
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

  /** Until this key's own pacer lets one more send leave. */
  private async waitLocal(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted || this.draining) throw new AbortedError('run stopped');
      const t = now();
      const { at, cause } = this.pacer.earliest(t);
      // A timer cannot wait less than about a millisecond; pacing's grid makes up for a send that
      // leaves that little early, and the quota logs carry a guard of several ms. A pause after a
      // 429 is never cut short.
      if (at <= t || (cause !== 'pause' && at - t < PACING_TOLERANCE_MS)) return;
      // Waiting for an answer (Infinity) ends when one comes, not at `at`.
      if (at > this.closesAt && at !== Number.POSITIVE_INFINITY) throw new HeldPastEndError(at, cause);
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
  }

  /**
   * The shared quota's slot for this send, waited for; false when another generator's 429 paused
   * the key meanwhile (the slot is given up, and the pause is now this pacer's too).
   */
  private async reserveShared(signal: AbortSignal): Promise<boolean> {
    const { store, key } = this.shared as SharedQuota;
    const spec = this.pacer.quotaSpec();
    // Raw mode shares only pauses: it does not pace, so it reserves no slot.
    if (spec) {
      const asked = now();
      const wait = await store.reserve(key, spec);
      // A slot free at once was reserved with the pause as it stands: nothing to look at again.
      if (wait <= PACING_TOLERANCE_MS && now() - asked <= spec.lateMs) return true;
      const slot = now() + wait;
      if (slot > this.closesAt) throw new HeldPastEndError(slot, 'pacing');
      await sleepUntil(slot, signal);
      if (signal.aborted) throw new AbortedError('run stopped');
      // Woken too late (a busy event loop): the slot is given up, and stays counted, which only
      // makes every generator more careful; this send reserves another.
      if (now() - slot > spec.lateMs) return false;
    }
    const left = await store.pauseLeft(key);
    if (left <= 0) return true;
    const t = now();
    this.pacer.pause(t + left, t);
    return false;
  }

  private async waitTurn(queuedAt: number, signal: AbortSignal): Promise<Admission> {
    for (;;) {
      await this.waitLocal(signal);
      if (!this.shared) break;
      // A 429 of our own while the shared slot was waited for pauses us as much as another's.
      if ((await this.reserveShared(signal)) && this.pacer.pausedUntil <= now()) break;
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
