import { MAX_TIMER_MS, now } from './clock.ts';

/**
 * One caller's wait: until `at` (epoch ms), until woken (a key's answer came), or until its run's
 * signal aborts. A class, so that the heap's entries keep one shape.
 */
export class Waiter {
  /** Position in the heap; -1 when not in it (waiting for a wake, or done). */
  index = -1;
  /** Settled once, whatever ended the wait first. */
  done = false;
  readonly at: number;
  /** Ties of `at` wake in the order they were asked for. */
  readonly order: number;
  readonly resolve: () => void;
  readonly group: Set<Waiter> | undefined;

  constructor(at: number, order: number, resolve: () => void, group: Set<Waiter> | undefined) {
    this.at = at;
    this.order = order;
    this.resolve = resolve;
    this.group = group;
  }
}

/**
 * Every wait of a client's keys (pacing, 429 pauses, backoff) on one timer: a min-heap of wake-ups
 * and a single setTimeout armed for the earliest. A run of 10,000 keys then keeps one timer, not one
 * per waiting key, and each wait costs a heap insert (log n), not a timer of its own.
 *
 * The timer is not unref'd: as with a timer per wait, a run with waits pending stays alive. Waits
 * longer than Node's timer limit (2^31-1 ms) are kept in steps of it. Aborting a signal wakes every
 * wait made with it, through one listener per signal rather than one per wait (removing a listener
 * from an EventTarget is a scan of its listeners: with thousands of waits, that scan per wait).
 */
export class Scheduler {
  private readonly heap: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** What the armed timer was armed for: waits due by then are woken when it fires. */
  private armedFor = Number.POSITIVE_INFINITY;
  private order = 0;
  /** Waits by their signal: the run's (one at a time), so a one-entry cache before the map. */
  private readonly groups = new WeakMap<AbortSignal, Set<Waiter>>();
  private lastSignal: AbortSignal | undefined;
  private lastGroup: Set<Waiter> | undefined;

  /** Waits pending (on the timer or for a wake), for tests and the status line. */
  get size(): number {
    return this.heap.length;
  }

  /** Resolves at `at` (epoch ms, as `now`), or at once when `signal` aborts; any `at`, even years away. */
  sleepUntil(at: number, signal?: AbortSignal): Promise<void> {
    // NaN (a time nobody could compute) waits for nothing, as clock.sleepUntil.
    if (!(at - now() > 0) || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter = new Waiter(at, this.order++, resolve, this.groupOf(signal));
      waiter.group?.add(waiter);
      this.push(waiter);
      if (waiter.index === 0 && at < this.armedFor) this.arm();
    });
  }

  /**
   * A wait that only `wake` (or `signal`) ends: for a send waiting for an answer, whose time is not
   * known. `onWaiter` gets the handle at once, to keep where the waker finds it.
   */
  park(signal: AbortSignal | undefined, onWaiter: (waiter: Waiter) => void): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter = new Waiter(Number.POSITIVE_INFINITY, this.order++, resolve, this.groupOf(signal));
      waiter.group?.add(waiter);
      onWaiter(waiter);
    });
  }

  /** Ends a wait now (no-op when it has ended). */
  wake(waiter: Waiter): void {
    if (waiter.done) return;
    if (waiter.index >= 0) {
      this.remove(waiter.index);
      if (this.heap.length === 0) this.disarm();
    }
    this.settle(waiter);
  }

  private settle(waiter: Waiter): void {
    waiter.done = true;
    waiter.group?.delete(waiter);
    waiter.resolve();
  }

  private groupOf(signal: AbortSignal | undefined): Set<Waiter> | undefined {
    if (signal === undefined) return undefined;
    if (signal === this.lastSignal) return this.lastGroup;
    let group = this.groups.get(signal);
    if (group === undefined) {
      const members = new Set<Waiter>();
      group = members;
      this.groups.set(signal, members);
      signal.addEventListener('abort', () => this.abortAll(members), { once: true });
    }
    this.lastSignal = signal;
    this.lastGroup = group;
    return group;
  }

  private abortAll(group: Set<Waiter>): void {
    for (const waiter of [...group]) {
      if (waiter.index >= 0) this.remove(waiter.index);
      this.settle(waiter);
    }
    if (this.heap.length === 0) this.disarm();
    else if (this.heap[0]!.at < this.armedFor) this.arm();
  }

  /** Arms the one timer for the earliest wait (or a step of the timer limit towards it). */
  private arm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const first = this.heap[0];
    if (first === undefined) {
      this.timer = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
      return;
    }
    const t = now();
    const delay = first.at - t;
    const step = Math.min(Math.max(delay, 0), MAX_TIMER_MS);
    this.armedFor = delay > MAX_TIMER_MS ? t + step : first.at;
    this.timer = setTimeout(this.fire, step);
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  /**
   * Wakes every wait due by the time the timer was armed for, even if the clock reads up to a
   * millisecond less (a timer's delay is whole milliseconds of the event loop's clock, and its
   * caller looks at the clock again). A timer that fires earlier than that (the loop's cached clock
   * was stale when it was armed, on a busy machine) is armed again for the rest: no wait wakes
   * before its time by more than the millisecond every caller tolerates.
   */
  private readonly fire = (): void => {
    this.timer = undefined;
    if (now() < this.armedFor - 1) {
      this.arm();
      return;
    }
    const cutoff = Math.max(now(), this.armedFor);
    this.armedFor = Number.POSITIVE_INFINITY;
    const heap = this.heap;
    while (heap.length > 0 && heap[0]!.at <= cutoff) {
      const waiter = heap[0]!;
      this.remove(0);
      this.settle(waiter);
    }
    if (heap.length > 0) this.arm();
  };

  private push(waiter: Waiter): void {
    waiter.index = this.heap.length;
    this.heap.push(waiter);
    this.up(waiter.index);
  }

  private remove(index: number): void {
    const heap = this.heap;
    const gone = heap[index]!;
    const last = heap.pop()!;
    gone.index = -1;
    if (last === gone) return;
    heap[index] = last;
    last.index = index;
    this.up(index);
    this.down(last.index);
  }

  private static before(a: Waiter, b: Waiter): boolean {
    return a.at < b.at || (a.at === b.at && a.order < b.order);
  }

  private up(index: number): void {
    const heap = this.heap;
    const item = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent]!;
      if (!Scheduler.before(item, above)) break;
      heap[index] = above;
      above.index = index;
      index = parent;
    }
    heap[index] = item;
    item.index = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const n = heap.length;
    const item = heap[index]!;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && Scheduler.before(heap[right]!, heap[child]!)) child = right;
      const below = heap[child]!;
      if (!Scheduler.before(below, item)) break;
      heap[index] = below;
      below.index = index;
      index = child;
    }
    heap[index] = item;
    item.index = index;
  }
}
