/**
 * Wall-clock milliseconds with sub-millisecond resolution. Pacing compares our send times with the
 * server's `X-RateLimit-Reset` (Unix seconds) and `Retry-After`, so it needs the wall clock's origin;
 * it needs performance.now()'s monotonic resolution to space requests a few ms apart. The global
 * `performance`, not node:perf_hooks', so that a test's fake clock is the clock this reads.
 */
export const now = (): number => performance.timeOrigin + performance.now();

/**
 * The longest delay a Node timer keeps: beyond it Node warns and fires after 1 ms, which turns a
 * long wait (a server's Retry-After of years) into a spin. Longer waits sleep in steps of it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One sleepUntil's wait, as an object rather than closures: tsx names every function expression as
 * it is made (an Object.defineProperty each), and the open model sleeps up to a thousand times a
 * second. It is its own abort listener (EventTarget calls `handleEvent`), and the timers get it as
 * their argument.
 */
class Sleep {
  timer: NodeJS.Timeout | undefined;
  readonly at: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: () => void;

  constructor(at: number, signal: AbortSignal | undefined, resolve: () => void) {
    this.at = at;
    this.signal = signal;
    this.resolve = resolve;
  }

  /** Only a step that was cut to the limit looks at the clock again: an ordinary wait arms one timer. */
  arm(delay: number): void {
    this.timer = delay > MAX_TIMER_MS ? setTimeout(rearm, MAX_TIMER_MS, this) : setTimeout(wake, delay, this);
  }

  handleEvent(): void {
    this.done();
  }

  done(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    this.resolve();
  }
}

function rearm(sleep: Sleep): void {
  sleep.arm(sleep.at - now());
}

function wake(sleep: Sleep): void {
  sleep.done();
}

/** Resolves at `at` (epoch ms, as `now`), or at once when the signal aborts; any `at`, even years away. */
export function sleepUntil(at: number, signal?: AbortSignal): Promise<void> {
  const delay = at - now();
  // NaN (a time nobody could compute) waits for nothing rather than arming a 1 ms timer in a loop.
  if (!(delay > 0) || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const sleep = new Sleep(at, signal, resolve);
    signal?.addEventListener('abort', sleep, { once: true });
    sleep.arm(delay);
  });
}

/** A timer for any delay: `fn` runs after `ms` unless the returned function cancels it first. */
export function after(ms: number, fn: () => void): () => void {
  const stop = new AbortController();
  sleepUntil(now() + ms, stop.signal).then(() => {
    if (!stop.signal.aborted) fn();
  });
  return () => stop.abort();
}
