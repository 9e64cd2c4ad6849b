import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, now } from '../../src/client/clock.ts';
import { Scheduler, type Waiter } from '../../src/client/scheduler.ts';

const FAKE = { toFake: ['setTimeout', 'clearTimeout', 'performance'] } as Parameters<
  typeof vi.useFakeTimers
>[0];

// Mocks first: a spy taken on a faked setTimeout restores the fake, which real timers then replace.
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** Timers armed and cleared while `body` runs, and the most that were pending at once. */
function watchTimers() {
  let live = 0;
  let most = 0;
  let armed = 0;
  const pending = new Set<unknown>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
    armed++;
    const handle = realSet(() => {
      pending.delete(handle);
      live = pending.size;
      fn();
    }, ms);
    pending.add(handle);
    live = pending.size;
    most = Math.max(most, live);
    return handle;
  }) as typeof setTimeout);
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((handle: NodeJS.Timeout) => {
    pending.delete(handle);
    live = pending.size;
    realClear(handle);
  }) as typeof clearTimeout);
  return { armed: () => armed, most: () => most, live: () => live };
}

describe('Scheduler', () => {
  it('wakes waits in the order of their times, ties in the order they were asked for', async () => {
    vi.useFakeTimers(FAKE);
    const s = new Scheduler();
    const t = now();
    const order: string[] = [];
    const offsets: [string, number][] = [
      ['c', 30],
      ['a', 10],
      ['d', 30],
      ['b', 20],
      ['e', 40],
    ];
    const done = offsets.map(([name, ms]) => s.sleepUntil(t + ms).then(() => order.push(name)));
    await vi.advanceTimersByTimeAsync(25);
    expect(order).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(25);
    await Promise.all(done);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(s.size).toBe(0);
  });

  it('never wakes a wait before its time', async () => {
    const s = new Scheduler();
    const t = now();
    const late: number[] = [];
    await Promise.all(
      [5, 1, 12, 7, 3, 9].map((ms) =>
        s.sleepUntil(t + ms).then(() => {
          late.push(now() - (t + ms));
        }),
      ),
    );
    // A timer fires on the event loop's whole-millisecond clock: at most that much early.
    for (const l of late) expect(l).toBeGreaterThanOrEqual(-1);
  });

  it('keeps one timer for a thousand waits', async () => {
    const timers = watchTimers();
    const s = new Scheduler();
    const t = now();
    const waits: Promise<void>[] = [];
    // Later times first would re-arm the timer each time; in order it is armed once, then re-armed as each batch fires.
    for (let i = 0; i < 1000; i++) waits.push(s.sleepUntil(t + 20 + (i % 10)));
    expect(timers.armed()).toBe(1);
    await Promise.all(waits);
    expect(timers.most()).toBe(1);
    // One timer per distinct time at most, not one per wait.
    expect(timers.armed()).toBeLessThanOrEqual(11);
    expect(timers.live()).toBe(0);
  });

  it('re-arms for an earlier wait, and leaves no timer when the last wait ends', async () => {
    const timers = watchTimers();
    const s = new Scheduler();
    const stop = new AbortController();
    const t = now();
    const far = s.sleepUntil(t + 60_000, stop.signal);
    // Read afresh and 50 ms ahead: a wait already due takes no timer, and a loaded machine (CI saw it)
    // can pass 5 ms between two statements.
    const near = s.sleepUntil(now() + 50);
    expect(timers.armed()).toBe(2);
    expect(timers.live()).toBe(1);
    await near;
    expect(timers.live()).toBe(1);
    stop.abort();
    await far;
    expect(timers.live()).toBe(0);
    expect(s.size).toBe(0);
  });

  it('an abort wakes every wait made with that signal at once, and no other', async () => {
    const s = new Scheduler();
    const run = new AbortController();
    const other = new AbortController();
    const t = now();
    const woken: string[] = [];
    const a = s.sleepUntil(t + 60_000, run.signal).then(() => woken.push('a'));
    const b = s.sleepUntil(t + 30_000, run.signal).then(() => woken.push('b'));
    // Far enough that a stall between two statements of a loaded machine does not end it before the abort.
    const cDue = now() + 200;
    const c = s.sleepUntil(cDue, other.signal).then(() => {
      woken.push('c');
      return now();
    });
    let parked: Waiter | undefined;
    const p = s
      .park(run.signal, (w) => {
        parked = w;
      })
      .then(() => woken.push('p'));
    expect(parked).toBeDefined();
    run.abort();
    await Promise.all([a, b, p]);
    expect(woken.sort()).toEqual(['a', 'b', 'p']);
    // The other run's sleeper was not woken by this run's abort: it slept until its own time.
    expect(await c).toBeGreaterThanOrEqual(cDue - 1);
    // A signal already aborted waits for nothing.
    await s.sleepUntil(now() + 60_000, run.signal);
    expect(s.size).toBe(0);
  });

  it('a parked wait ends when woken, once', async () => {
    const s = new Scheduler();
    let waiter: Waiter | undefined;
    let ended = 0;
    const p = s
      .park(undefined, (w) => {
        waiter = w;
      })
      .then(() => ended++);
    await Promise.resolve();
    expect(ended).toBe(0);
    s.wake(waiter as Waiter);
    s.wake(waiter as Waiter);
    await p;
    expect(ended).toBe(1);
  });

  it('waits past the timer limit in steps, and ends them when due', async () => {
    vi.useFakeTimers(FAKE);
    const delays: number[] = [];
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const s = new Scheduler();
    let woke = false;
    void s.sleepUntil(now() + 2.5 * MAX_TIMER_MS).then(() => {
      woke = true;
    });
    await vi.advanceTimersByTimeAsync(2 * MAX_TIMER_MS);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(0.5 * MAX_TIMER_MS + 1);
    expect(woke).toBe(true);
    for (const call of spy.mock.calls) delays.push(Number(call[1]));
    for (const d of delays) expect(d).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect(delays.length).toBeLessThanOrEqual(4);
  });

  it('wakes any mix of waits in time order, the aborted ones at the abort (heap property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ ms: fc.integer({ min: 1, max: 500 }), aborted: fc.boolean() }), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.integer({ min: 0, max: 600 }),
        async (waits, abortAtMs) => {
          vi.useFakeTimers(FAKE);
          try {
            const s = new Scheduler();
            const stop = new AbortController();
            const t = now();
            const woke: { i: number; at: number }[] = [];
            const all = waits.map((w, i) =>
              s.sleepUntil(t + w.ms, w.aborted ? stop.signal : undefined).then(() => {
                woke.push({ i, at: now() - t });
              }),
            );
            await vi.advanceTimersByTimeAsync(abortAtMs);
            stop.abort();
            await vi.advanceTimersByTimeAsync(600);
            await Promise.all(all);
            expect(woke).toHaveLength(waits.length);
            for (const { i, at } of woke) {
              const w = waits[i] as { ms: number; aborted: boolean };
              // On time, or at the abort if that came first.
              expect(at).toBe(w.aborted ? Math.min(w.ms, abortAtMs) : w.ms);
            }
            // Those woken by the clock come in the order of their times, ties in the order asked.
            const timed = woke.filter(({ i }) => !(waits[i]?.aborted && abortAtMs < (waits[i]?.ms ?? 0)));
            for (let k = 1; k < timed.length; k++) {
              const prev = timed[k - 1] as { i: number; at: number };
              const cur = timed[k] as { i: number; at: number };
              expect(cur.at > prev.at || (cur.at === prev.at && cur.i > prev.i)).toBe(true);
            }
            expect(s.size).toBe(0);
          } finally {
            vi.useRealTimers();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
