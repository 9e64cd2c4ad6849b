import { MAX_TIMER_MS, now } from './clock.ts';

/**
 * How pacing went on once the store answered again: `intact` (the same store process, or one that
 * held the key's reservations: a promoted replica, or a restarted store another generator had
 * already written them back to), `server` (the store had forgotten them, and the server's own
 * Remaining and Reset were written back in their place), `held` (forgotten, and the server told
 * nothing: one window of the plan was waited out since the last send any generator may have made),
 * `local-share` (each generator paced alone at its share of the plan while the store was away).
 */
export type StoreResume = 'intact' | 'server' | 'held' | 'local-share';

/** One spell in which the shared quota store did not answer (epoch ms). */
export interface StoreOutage {
  /** Since when the store did not answer: the first call it left unanswered was asked then. */
  from: number;
  /**
   * When that was found out (the call's timeout, a dropped connection). Every reservation any
   * generator made came before it, as `from` does not promise (a call asked just before the store
   * died): pacing resumes counting from here.
   */
  seenAt: number;
  /** When it answered again; absent while it has not. */
  to?: number;
  /** Sends that waited for it (they were held, not sent without a reservation). */
  held: number;
  /** Sends that left without it: only `--store-outage local-share` sends any. */
  sentWithout: number;
  resumed?: StoreResume;
}

/** The sends of a run that could not leave because its quota store was away when the run closed. */
export class StoreAwayError extends Error {
  override readonly name = 'StoreAwayError';
}

/**
 * Watches a shared quota store that can go away and come back (Redis restarted, failed over, a lost
 * route): records each outage, finds out when the store answers again by probing with a capped
 * exponential backoff with jitter (every sender waiting on one probe, not each asking on its own),
 * and tells whether the store that answers is the one that was lost (`epoch` moves when it is not:
 * a restarted or promoted server may have forgotten reservations the target still counts).
 */
export class StoreWatch {
  readonly outages: StoreOutage[] = [];
  /** Moves each time the store comes back as another server process. */
  epoch = 0;
  private current: StoreOutage | undefined;
  private waiters = new Set<() => void>();
  private probing = false;
  private closed = false;
  private givenUp = false;
  /** Outages in a row that ended within a second of their start: a store that answers probes but fails sends. */
  private relapses = 0;
  /** The answering server's identity; rejects while the store is away. */
  private readonly probe: () => Promise<string>;
  private serverId: string;

  constructor(probe: () => Promise<string>, serverId: string) {
    this.probe = probe;
    this.serverId = serverId;
  }

  get down(): boolean {
    return this.current !== undefined;
  }

  /**
   * The store failed a call, or dropped its connection: silent since `at` (a call that timed out
   * says when it was asked), though never before the last outage ended.
   */
  lost(at: number = now()): void {
    if (this.closed) return;
    if (this.current === undefined) {
      const last = this.outages.at(-1);
      const from = Math.max(at, last?.to ?? at);
      this.relapses = last?.to !== undefined && from - last.to < 1000 ? this.relapses + 1 : 0;
      this.current = { from, seenAt: Math.max(from, now()), held: 0, sentWithout: 0 };
      this.outages.push(this.current);
    }
    if (!this.probing) void this.probeUntilBack();
  }

  /** The latest outage, ended or not. */
  latest(): StoreOutage | undefined {
    return this.outages.at(-1);
  }

  /**
   * Resolves true once the store answers again; false when `signal` aborts, `deadline` (epoch ms)
   * passes, or the watch gave up first.
   */
  whenBack(signal: AbortSignal, deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (!this.down) return Promise.resolve(true);
    if (this.closed || this.givenUp || signal.aborted || deadline <= now()) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = Number.isFinite(deadline)
        ? setTimeout(() => done(), Math.min(deadline - now(), MAX_TIMER_MS))
        : undefined;
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve(!this.down);
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * The workload is over: while the store stays away, sends (teardown's) fail at once rather than
   * wait for it; once it answers again they go on as before.
   */
  giveUp(): void {
    if (!this.down) return;
    this.givenUp = true;
    for (const wake of [...this.waiters]) wake();
  }

  /** A send queued at `queuedAt` and admitted (or given up) now: counted as held by every outage it waited through. */
  countHeld(queuedAt: number, doneAt: number): void {
    for (let i = this.outages.length - 1; i >= 0; i--) {
      const o = this.outages[i] as StoreOutage;
      if ((o.to ?? Number.POSITIVE_INFINITY) < queuedAt) break;
      if (o.from <= doneAt) o.held++;
    }
  }

  /** Stops probing and releases every waiter: the run is over. */
  close(): void {
    this.closed = true;
    for (const wake of [...this.waiters]) wake();
  }

  private async probeUntilBack(): Promise<void> {
    this.probing = true;
    try {
      for (let attempt = this.relapses; !this.closed && this.current; attempt++) {
        // 50 ms doubling to 2 s, each drawn from its upper half: generators that lost one store
        // together do not all knock at the same instant.
        const ceiling = Math.min(2000, 50 * 2 ** Math.min(attempt, 6));
        await pause(ceiling * (0.5 + Math.random() / 2));
        if (this.closed) return;
        try {
          this.found(await this.probe());
        } catch {
          // Still away: the next probe waits longer.
        }
      }
    } finally {
      this.probing = false;
    }
  }

  private found(serverId: string): void {
    if (serverId !== this.serverId) {
      this.serverId = serverId;
      this.epoch++;
    } else if (this.current) this.current.resumed ??= 'intact';
    if (this.current) this.current.to = now();
    this.current = undefined;
    this.givenUp = false;
    for (const wake of [...this.waiters]) wake();
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
