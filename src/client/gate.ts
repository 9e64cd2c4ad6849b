import { BudgetHold } from './budget-hold.ts';
import { now } from './clock.ts';
import { Pacer } from './pacer.ts';
import type { QuotaSpec, QuotaStore } from './quota-store.ts';
import { Scheduler, type Waiter } from './scheduler.ts';
import { StoreAwayError, type StoreOutage, type StoreResume, type StoreWatch } from './store-outage.ts';

/** A quota shared with other generators: the store, and the key's name in it. */
export interface SharedQuota {
  store: QuotaStore;
  key: string;
  /**
   * `--store-outage local-share`: while the store is away, this generator paces alone at 1/N of the
   * plan (N: the generators sharing the key), rather than wait for the store.
   */
  localShare?: number;
}

export interface Admission {
  /** Time spent waiting for pacing (quota spacing, the server's budget, in-flight limits), ms. */
  pacingWaitMs: number;
  /** Of `pacingWaitMs`, the time the key was held by the server's told budget (Remaining spent), ms. */
  budgetWaitMs: number;
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
  /** When the send could have left, epoch ms. */
  readonly until: number;
  readonly heldBy: ReturnType<Pacer['earliest']>['cause'];

  constructor(until: number, heldBy: ReturnType<Pacer['earliest']>['cause']) {
    super(`held until ${until}, after the run closes`);
    this.until = until;
    this.heldBy = heldBy;
  }
}

/**
 * What every Gate of a client shares: the run's close and drain, set once for all its keys (no
 * loop over keys when a run closes), and the one scheduler all their waits go through.
 */
export class GateContext {
  /**
   * No send leaves after this time (epoch ms): the run's end, or its setup's or teardown's limit. A
   * send the pacer would hold beyond it fails at once with HeldPastEndError instead of sleeping.
   */
  closesAt = Number.POSITIVE_INFINITY;
  /** Interrupted: no new send leaves (AbortedError at once), while the ones in flight may answer. */
  draining = false;
  readonly scheduler: Scheduler;

  constructor(scheduler: Scheduler = new Scheduler()) {
    this.scheduler = scheduler;
  }
}

const SETTLED: Promise<unknown> = Promise.resolve();

/**
 * Admits the sends of one key one at a time, in arrival order, each when its Pacer allows, and
 * records each admitted send in the pacer. A single queue (not one timer per caller) is what makes
 * the spacing exact under any concurrency.
 */
export class Gate {
  private chain: Promise<unknown> = SETTLED;
  /** Callers queued and not yet admitted. */
  private waiting = 0;
  /** Callers waiting for an answer; made when the first one waits. */
  private responseWaiters: Waiter[] | undefined;
  /** The shared store's server this key last paced with (StoreWatch.epoch). */
  private storeEpoch: number;
  /**
   * `localShare`: this generator's own sends against 1/N of every window, kept all run long so that
   * an outage starts from what it sent before, not from an empty log.
   */
  private readonly share: Pacer | undefined;
  /** The outage whose sends without the store this key has told it of (local-share). */
  private toldOf: StoreOutage | undefined;
  /** When this key's sends without the store left (local-share), until the store is told of them. */
  private withoutStore: number[] | undefined;
  readonly pacer: Pacer;
  /** The key's holds by the server's told budget: none until its first. */
  private hold: BudgetHold | undefined;
  /** With other generators: every send also reserves its slot in the store, and heeds its pause. */
  private readonly shared?: SharedQuota;
  /** The run's close and drain, and the scheduler, shared with the client's other keys. */
  readonly context: GateContext;

  constructor(pacer: Pacer, shared?: SharedQuota, context: GateContext = new GateContext()) {
    this.pacer = pacer;
    this.shared = shared;
    this.context = context;
    this.storeEpoch = shared?.store.watch?.epoch ?? 0;
    this.share = shared?.localShare && shared.store.watch ? sharePacer(pacer, shared.localShare) : undefined;
  }

  /** See GateContext.closesAt: setting it closes every gate of the context. */
  get closesAt(): number {
    return this.context.closesAt;
  }
  set closesAt(at: number) {
    this.context.closesAt = at;
  }

  /** See GateContext.draining. */
  get draining(): boolean {
    return this.context.draining;
  }
  set draining(on: boolean) {
    this.context.draining = on;
  }

  /** Wall time the server's told budget held this key up to `at` (no later than now), ms. */
  budgetHeld(at: number = now()): number {
    return this.hold?.heldMs(at) ?? 0;
  }

  private budgetHold(): BudgetHold {
    if (this.hold === undefined) this.hold = new BudgetHold(this.pacer);
    return this.hold;
  }

  /** The fields of the answer that spent the key's budget for its latest hold, as the server sent them. */
  get budgetTold(): string | undefined {
    return this.hold?.told;
  }

  /** A 429's pause, for every generator of the key (the local pacer has it already). */
  async sharePause(ms: number): Promise<void> {
    await this.shared?.store.pause(this.shared.key, ms);
  }

  /** Call after `pacer.observe`, so a sender waiting for an answer can go on. */
  responded(): void {
    const waiters = this.responseWaiters;
    if (waiters === undefined) return;
    this.responseWaiters = undefined;
    const scheduler = this.context.scheduler;
    for (const waiter of waiters) scheduler.wake(waiter);
  }

  /** `signal` is the caller's run: aborting it ends this wait with AbortedError. */
  acquire(signal: AbortSignal): Promise<Admission> {
    if (this.context.draining) return Promise.reject(new AbortedError('run stopped'));
    // Fast path: nobody queued and the pacer says go. Most sends of a run under its quota take it,
    // and it saves the queue's promises on the generator's hottest path.
    if (this.waiting === 0 && !signal.aborted && !this.shared) {
      const t = now();
      const { at, cause } = this.pacer.earliest(t);
      if (at <= t || (cause !== 'pause' && at - t < PACING_TOLERANCE_MS)) {
        return Promise.resolve({
          pacingWaitMs: 0,
          budgetWaitMs: 0,
          backoffWaitMs: 0,
          seq: this.pacer.sent(t),
        });
      }
    }
    const queuedAt = now();
    const heldBefore = this.budgetHeld(queuedAt);
    this.waiting++;
    const admitted = this.chain.then(() => this.waitTurn(queuedAt, heldBefore, signal));
    const left = () => {
      // The last caller out lets the settled chain go, so an idle key holds no promises.
      if (--this.waiting === 0) this.chain = SETTLED;
      // Held: waited for an away store. A generator that paces at its share meanwhile holds none.
      const watch = this.shared?.store.watch;
      if (watch !== undefined && watch.outages.length > 0 && !this.share) watch.countHeld(queuedAt, now());
    };
    this.chain = admitted.then(left, left);
    return admitted;
  }

  /** Until this key's own pacer lets one more send leave. */
  private async waitLocal(signal: AbortSignal): Promise<void> {
    for (;;) {
      const context = this.context;
      if (signal.aborted || context.draining) throw new AbortedError('run stopped');
      const t = now();
      const { at, cause } = this.pacer.earliest(t);
      // A timer cannot wait less than about a millisecond; pacing's grid makes up for a send that
      // leaves that little early, and the quota logs carry a guard of several ms. A pause after a
      // 429 is never cut short.
      if (at <= t || (cause !== 'pause' && at - t < PACING_TOLERANCE_MS)) return;
      const hold = cause === 'budget' ? this.budgetHold() : undefined;
      hold?.begins(t, at, PACING_TOLERANCE_MS);
      // Waiting for an answer (Infinity) ends when one comes, not at `at`.
      if (at > context.closesAt && at !== Number.POSITIVE_INFINITY) throw new HeldPastEndError(at, cause);
      try {
        if (at === Number.POSITIVE_INFINITY) {
          await context.scheduler.park(signal, (waiter) => {
            if (this.responseWaiters === undefined) this.responseWaiters = [waiter];
            else this.responseWaiters.push(waiter);
          });
        } else {
          await context.scheduler.sleepUntil(at, signal);
        }
      } finally {
        hold?.ends(now());
      }
    }
  }

  /**
   * The shared quota's slot for this send, waited for; false when another generator's 429 paused
   * the key meanwhile (the slot is given up, and the pause is now this pacer's too), or when the
   * store failed the call: a send never leaves without the store's say, it waits for the store.
   */
  private async reserveShared(signal: AbortSignal): Promise<boolean> {
    const { store } = this.shared as SharedQuota;
    const watch = store.watch;
    if (watch === undefined) return this.reserveSlot(signal);
    try {
      if (watch.down && !(await watch.whenBack(signal, this.context.closesAt))) {
        // Cut off by the run's end (or its close while the store was away): not a failure of the flow.
        if (signal.aborted || this.context.draining || now() >= this.context.closesAt)
          throw new AbortedError('run stopped');
        throw new StoreAwayError('the quota store was away when the workload ended');
      }
      if (this.storeEpoch !== watch.epoch || this.sentWithoutStore(watch)) await this.resume(watch, signal);
      return await this.reserveSlot(signal);
    } catch (error) {
      if (error instanceof AbortedError || error instanceof StoreAwayError) throw error;
      // The store's own words stay here: the outage is recorded, and the send waits for it.
      watch.lost();
      return false;
    }
  }

  /** Sends of the latest outage that left without the store and that it has not been told of yet. */
  private sentWithoutStore(watch: StoreWatch): boolean {
    const outage = watch.latest();
    return outage !== undefined && outage.sentWithout > 0 && this.toldOf !== outage;
  }

  /**
   * The first send of this key after the store came back as another server (restarted empty, or a
   * replica promoted without the last writes): the reservations it lost are put back from the
   * target's own word (its Remaining until its Reset) where it gave one; where it did not and the
   * store holds nothing of the key, nothing leaves until one window of the plan has passed since the
   * outage began, by when every send that any generator made before it has aged out. Sends that left
   * without the store (local-share) are told to it first, whichever store it is.
   */
  private async resume(watch: StoreWatch, signal: AbortSignal): Promise<void> {
    const epoch = watch.epoch;
    const outage = watch.latest();
    const spec = this.pacer.quotaSpec();
    const sent = this.withoutStore;
    if (spec && sent && this.shared?.store.tell) {
      const t = now();
      await this.shared.store.tell(
        this.shared.key,
        spec,
        sent.map((at) => t - at),
      );
      this.withoutStore = undefined;
    }
    // Only once told: a store that fails the telling is told again at its return.
    this.toldOf = outage;
    if (spec && epoch !== this.storeEpoch) {
      const resumed = await this.restore(spec, outage?.seenAt ?? now());
      if (outage) outage.resumed ??= resumed.how;
      if (resumed.holdUntil !== undefined) {
        if (resumed.holdUntil > this.context.closesAt)
          throw new HeldPastEndError(resumed.holdUntil, 'pacing');
        if (resumed.holdUntil > now()) await this.context.scheduler.sleepUntil(resumed.holdUntil, signal);
        if (signal.aborted) throw new AbortedError('run stopped');
      }
    }
    this.storeEpoch = epoch;
  }

  /**
   * What the target said of the window it counts, put back into a store that came back as another
   * server: what it still counted until its Reset, or nothing where that Reset came well after the
   * outage began (a new window that no send has reached yet); else, where the store holds nothing of the
   * key, a hold of one window of the plan from when the outage was found out.
   */
  private async restore(
    spec: QuotaSpec,
    downFrom: number,
  ): Promise<{ how: StoreResume; holdUntil?: number }> {
    const { store, key } = this.shared as SharedQuota;
    const t = now();
    const word = this.pacer.serverWord();
    const index = word ? spec.windows.findIndex((w) => w.limit === word.limit) : -1;
    if (word && index >= 0) {
      if (word.until > t) await store.reseed?.(key, spec, index, word.limit - word.remaining, word.until - t);
      // A Reset told in whole seconds is up to one late: a window that ended less than a second
      // after the outage began may have ended before it, and sends of others may count in the next.
      if (word.until > t || word.until - 1000 >= downFrom) return { how: 'server' };
    }
    if (!store.knows || (await store.knows(key))) return { how: 'intact' };
    return { how: 'held', holdUntil: downFrom + Math.min(...spec.windows.map((w) => w.spanMs)) };
  }

  /**
   * `localShare` while the store is away: true when this generator's share of the plan lets the send
   * go now (counted as sent without the store), false after waiting for it to (look again: the store
   * may be back by then).
   */
  private async takeShare(share: Pacer, signal: AbortSignal): Promise<boolean> {
    const watch = this.shared?.store.watch as StoreWatch;
    const t = now();
    const { at } = share.earliest(t);
    if (at <= t) {
      const outage = watch.latest();
      if (outage) {
        outage.sentWithout++;
        outage.resumed ??= 'local-share';
      }
      // Told to the store when it is back; no more than the largest window holds are ever looked at.
      this.withoutStore ??= [];
      this.withoutStore.push(t);
      if (this.withoutStore.length > this.largestLimit()) this.withoutStore.shift();
      return true;
    }
    if (at > this.context.closesAt) throw new HeldPastEndError(at, 'pacing');
    await this.context.scheduler.sleepUntil(at, signal);
    if (signal.aborted) throw new AbortedError('run stopped');
    return false;
  }

  private largestLimit(): number {
    return Math.max(1, ...(this.pacer.quotaSpec()?.windows.map((w) => w.limit) ?? [1]));
  }

  private async reserveSlot(signal: AbortSignal): Promise<boolean> {
    const { store, key } = this.shared as SharedQuota;
    const spec = this.pacer.quotaSpec();
    // Raw mode shares only pauses: it does not pace, so it reserves no slot.
    if (spec) {
      const asked = now();
      const wait = await store.reserve(key, spec);
      // A slot free at once was reserved with the pause as it stands: nothing to look at again.
      if (wait <= PACING_TOLERANCE_MS && now() - asked <= spec.lateMs) return true;
      const slot = now() + wait;
      if (slot > this.context.closesAt) throw new HeldPastEndError(slot, 'pacing');
      await this.context.scheduler.sleepUntil(slot, signal);
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

  private async waitTurn(queuedAt: number, heldBefore: number, signal: AbortSignal): Promise<Admission> {
    for (;;) {
      await this.waitLocal(signal);
      if (!this.shared) break;
      if (this.share && this.shared.store.watch?.down) {
        if (await this.takeShare(this.share, signal)) break;
        continue;
      }
      // A 429 of our own while the shared slot was waited for pauses us as much as another's.
      if ((await this.reserveShared(signal)) && this.pacer.pausedUntil <= now()) break;
    }
    const admittedAt = now();
    this.share?.sent(admittedAt);
    // Time this caller spent inside the key's latest pause counts as backoff, whether it waited at the
    // head of the queue or behind others; the rest of its wait was pacing.
    const { pausedFrom, pausedUntil } = this.pacer;
    const backoffWaitMs = Math.max(0, Math.min(admittedAt, pausedUntil) - Math.max(queuedAt, pausedFrom));
    const pacingWaitMs = admittedAt - queuedAt - backoffWaitMs;
    // The send is recorded here, at admission, not by the caller afterwards: a caller admitted on the
    // fast path in the same tick must already see it.
    return {
      pacingWaitMs,
      // Callers wait in turn, so the key's hold while this one waited is its wait under the budget.
      budgetWaitMs: Math.max(0, Math.min(pacingWaitMs, this.budgetHeld(admittedAt) - heldBefore)),
      backoffWaitMs,
      seq: this.pacer.sent(admittedAt),
    };
  }
}

/**
 * A generator's share of the plan while the store is away: 1/N of every window's limit (at least one
 * send), over the shared quota's spans, whose guard is the widest the client keeps.
 */
function sharePacer(pacer: Pacer, generators: number): Pacer | undefined {
  const spec = pacer.quotaSpec();
  if (!spec) return undefined;
  const windows = pacer.options.windows;
  const guardMs = Math.max(0, ...spec.windows.map((w, i) => w.spanMs - (windows[i]?.seconds ?? 0) * 1000));
  return new Pacer({
    windows: windows.map((w) => ({ ...w, limit: Math.max(1, Math.floor(w.limit / generators)) })),
    enforce: true,
    guardMs,
  });
}
