import { describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { Pacer } from '../../src/client/pacer.ts';

/** A whole-second epoch time, so that header resets (Unix seconds) line up with it. */
const T = 1_800_000_000_000;
const S = T / 1000;

/** Sends `n` requests, each at the earliest time the pacer allows; returns the send times. */
function sendAtEarliest(pacer: Pacer, n: number, start = T): number[] {
  const times: number[] = [];
  let now = start;
  for (let i = 0; i < n; i++) {
    const { at } = pacer.earliest(now);
    expect(Number.isFinite(at)).toBe(true);
    now = Math.max(now, at);
    pacer.sent(now);
    times.push(now);
  }
  return times;
}

/** The most sends that fall in any half-open span [t, t + spanMs). */
function maxInSpan(times: number[], spanMs: number): number {
  let most = 0;
  for (let i = 0; i < times.length; i++) {
    let j = i;
    while (j < times.length && (times[j] as number) < (times[i] as number) + spanMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

const perSecond = (limit: number): RateWindow[] => [{ name: 'second', limit, seconds: 1 }];

describe('Pacer, enforce on: quota pacing', () => {
  it('keeps any span of window + guard to the limit and spaces sends evenly', () => {
    const guardMs = 5;
    const pacer = new Pacer({ windows: perSecond(10), enforce: true, guardMs });
    const times = sendAtEarliest(pacer, 100);
    expect(maxInSpan(times, 1000 + guardMs)).toBeLessThanOrEqual(10);
    // Without the guard the log would let the 11th send leave exactly one window after the 1st.
    for (let i = 10; i < times.length; i++) {
      expect((times[i] as number) - (times[i - 10] as number)).toBeGreaterThanOrEqual(1000 + guardMs);
    }
    const spacing = ((times.at(-1) as number) - (times[0] as number)) / (times.length - 1);
    const expected = (1000 + guardMs) / 10;
    expect(Math.abs(spacing - expected) / expected).toBeLessThan(0.03);
    // Smooth, not a burst of 10 at each window start: no more than 2 sends in any tenth of the span.
    expect(maxInSpan(times, expected - 1)).toBeLessThanOrEqual(2);
  });

  it('makes up a late send only where a window alone counts: a limiter that may space sends sees no two closer than its interval and 1%', () => {
    const windows: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 }];
    // 60 per minute, guard 250 ms: one send each 1004.17 ms; where gaps may count, 1010 ms.
    const spacing = 60_250 / 60;
    const gapAfterLate = (pacer: Pacer) => {
      pacer.sent(T);
      // Its timer fired 25 ms late, on a busy loop.
      const late = pacer.earliest(T).at + 25;
      pacer.sent(late);
      return pacer.earliest(late).at - late;
    };
    // Not told the limiter: it may be nginx's limit_req without burst, which refuses a pair 999 ms apart.
    expect(gapAfterLate(new Pacer({ windows, enforce: true }))).toBeCloseTo(1010, 2);
    expect(gapAfterLate(new Pacer({ windows, enforce: true, limiter: 'gcra' }))).toBeGreaterThanOrEqual(1010);
    // At 5 a second the jitter's allowance is 1% of the interval (2 ms), not 10 ms.
    const five = new Pacer({ windows: perSecond(5), enforce: true });
    expect(gapAfterLate(five)).toBeCloseTo(202, 2);
    // At 100 a second it would be 0.1 ms, under a timer's granularity: a late send is made up there,
    // one spacing after its slot (a 25 ms lateness is past half a spacing: the grid restarts).
    const fast = new Pacer({ windows: perSecond(100), enforce: true });
    const t = fast.sent(T);
    fast.observe(t, undefined, T + 1, 'admitted');
    const slot = fast.earliest(T).at;
    fast.sent(slot + 3);
    expect(fast.earliest(slot + 3).at - slot).toBeCloseTo(10.05, 2);
    // A fixed window counts sends, not gaps: the grid makes up the 25 ms, so late timers lower no rate.
    expect(gapAfterLate(new Pacer({ windows, enforce: true, limiter: 'fixed-window' }))).toBeCloseTo(
      spacing - 25,
      2,
    );
  });

  it('keeps the gap from when a send was written, where the limiter may count gaps', () => {
    const windows: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 }];
    const writtenLate = (pacer: Pacer) => {
      const seq = pacer.sent(T);
      // Its connection was being opened: it left 30 ms after it was let go.
      pacer.departed(seq, T + 30);
      return pacer.earliest(T).at - T;
    };
    expect(writtenLate(new Pacer({ windows, enforce: true }))).toBeCloseTo(1040, 2);
    // A window counts sends, not gaps: the grid keeps its slot.
    expect(writtenLate(new Pacer({ windows, enforce: true, limiter: 'fixed-window' }))).toBeCloseTo(
      60_250 / 60,
      2,
    );
    // An older send's departure moves no slot a later send has set.
    const pacer = new Pacer({ windows, enforce: true });
    const first = pacer.sent(T);
    pacer.sent(T + 1010);
    pacer.departed(first, T + 30);
    expect(pacer.earliest(T + 1010).at - T).toBeCloseTo(2020, 2);
  });

  it("raw mode keeps the plan's gaps while a run prepares (setup, teardown), and none while it loads", () => {
    const pacer = new Pacer({ windows: [{ name: 'minute', limit: 60, seconds: 60 }], enforce: false });
    pacer.preparing = true;
    const seq = pacer.sent(T);
    pacer.observe(seq, undefined, T + 5, 'admitted');
    expect(pacer.earliest(T + 5).at - T).toBeCloseTo(1010, 2);
    pacer.preparing = false;
    const next = pacer.sent(T + 1010);
    pacer.observe(next, undefined, T + 1015, 'admitted');
    expect(pacer.earliest(T + 1015).at).toBe(T + 1015);
  });

  it('derives the default guard from the shortest window (0.5%, at least 5 ms)', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: true });
    const times = sendAtEarliest(pacer, 40);
    expect(maxInSpan(times, 1005)).toBeLessThanOrEqual(10);
    const long = new Pacer({ windows: [{ name: 'minute', limit: 6, seconds: 60 }], enforce: true });
    const slow = sendAtEarliest(long, 14);
    // 0.5% of 60 s is 300 ms, capped at 250 ms.
    expect(maxInSpan(slow, 60_250)).toBeLessThanOrEqual(6);
    expect((slow[6] as number) - (slow[0] as number)).toBeGreaterThanOrEqual(60_250);
  });

  it('respects every window of the plan (minute and day style)', () => {
    const guardMs = 10;
    const windows: RateWindow[] = [
      { name: 'minute', limit: 5, seconds: 1 },
      { name: 'day', limit: 12, seconds: 10 },
    ];
    const pacer = new Pacer({ windows, enforce: true, guardMs });
    const times = sendAtEarliest(pacer, 40);
    expect(maxInSpan(times, 1000 + guardMs)).toBeLessThanOrEqual(5);
    expect(maxInSpan(times, 10_000 + guardMs)).toBeLessThanOrEqual(12);
    // The long window binds: the 13th send waits for the 1st to leave the day span, although the
    // short window alone would have let it go after about 2.4 s.
    expect((times[12] as number) - (times[0] as number)).toBeGreaterThanOrEqual(10_000 + guardMs);
    expect((times[11] as number) - (times[0] as number)).toBeLessThan(3_000);
  });

  it('says why a send must wait', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: true, guardMs: 0 });
    expect(pacer.earliest(T)).toEqual({ at: T, cause: 'ready' });
    sendAtEarliest(pacer, 3);
    const next = pacer.earliest(T);
    expect(next.cause).toBe('pacing');
    expect(next.at).toBeGreaterThan(T);
  });
});

describe('Pacer: pause', () => {
  it('holds every send until the pause ends; an earlier pause does not shorten it', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: true, guardMs: 0 });
    pacer.pause(T + 5000);
    expect(pacer.earliest(T)).toEqual({ at: T + 5000, cause: 'pause' });
    expect(pacer.earliest(T + 4999)).toEqual({ at: T + 5000, cause: 'pause' });
    pacer.pause(T + 2000);
    expect(pacer.earliest(T + 3000)).toEqual({ at: T + 5000, cause: 'pause' });
    expect(pacer.earliest(T + 5000)).toEqual({ at: T + 5000, cause: 'ready' });
    pacer.pause(T + 9000);
    expect(pacer.earliest(T + 5000)).toEqual({ at: T + 9000, cause: 'pause' });
  });

  it('pauses raw mode too', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: false });
    pacer.pause(T + 1000);
    expect(pacer.earliest(T)).toEqual({ at: T + 1000, cause: 'pause' });
    expect(pacer.earliest(T + 1000).cause).toBe('ready');
  });
});

describe('Pacer, enforce on: server feedback', () => {
  const minute: RateWindow[] = [{ name: 'minute', limit: 10, seconds: 60 }];

  it('holds sends until the reported reset when Remaining is 0', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const seq = pacer.sent(T);
    pacer.observe(seq, { limit: 10, remaining: 0, reset: S + 30 }, T + 50);
    expect(pacer.earliest(T + 60)).toEqual({ at: (S + 30) * 1000, cause: 'budget' });
    expect(pacer.earliest((S + 30) * 1000).at).toBe((S + 30) * 1000);
    expect(pacer.earliest((S + 30) * 1000).cause).not.toBe('budget');
  });

  it('spends the reported budget on later sends, then holds', () => {
    const windows: RateWindow[] = [{ name: 'second', limit: 100, seconds: 1 }];
    const pacer = new Pacer({ windows, enforce: true, guardMs: 5 });
    const seq = pacer.sent(T);
    pacer.observe(seq, { limit: 100, remaining: 3, reset: S + 1 }, T + 1);
    let now = T + 1;
    let allowed = 0;
    for (;;) {
      const e = pacer.earliest(now);
      if (e.cause === 'budget') {
        expect(e.at).toBe((S + 1) * 1000);
        break;
      }
      now = Math.max(now, e.at);
      pacer.sent(now);
      allowed++;
      expect(allowed).toBeLessThan(50);
    }
    expect(allowed).toBe(3);
  });

  it('counts the requests still in flight against the reported budget', () => {
    const windows: RateWindow[] = [{ name: 'second', limit: 100, seconds: 1 }];
    const pacer = new Pacer({ windows, enforce: true, guardMs: 5 });
    const a = pacer.sent(T);
    pacer.sent(T + 20);
    pacer.sent(T + 40);
    // 2 left as of the first answer, and 2 requests may still reach the server: nothing left.
    pacer.observe(a, { limit: 100, remaining: 2, reset: S + 1 }, T + 50);
    expect(pacer.earliest(T + 60)).toEqual({ at: (S + 1) * 1000, cause: 'budget' });
  });

  it('holds until the start of a window it saw begin + the window, when that is before the reset', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const first = pacer.sent(T);
    // Remaining = limit - 1: this response was the first of its window, which began at T + 20 at the latest.
    pacer.observe(first, { limit: 10, remaining: 9, reset: S + 61 }, T + 20);
    // Another client on the key spent the rest: the server says 0 left, reset rounded up to S + 61.
    const second = pacer.sent(T + 500);
    pacer.observe(second, { limit: 10, remaining: 0, reset: S + 61 }, T + 520);
    expect(pacer.earliest(T + 600)).toEqual({ at: T + 60_020, cause: 'budget' });
  });

  it('holds until the reset when it did not see the window begin', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 4, reset: S + 61 }, T + 20);
    const second = pacer.sent(T + 500);
    pacer.observe(second, { limit: 10, remaining: 0, reset: S + 61 }, T + 520);
    expect(pacer.earliest(T + 600)).toEqual({ at: (S + 61) * 1000, cause: 'budget' });
  });

  it('does not let an earlier send answered late replace a later budget', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const a = pacer.sent(T);
    const b = pacer.sent(T + 10);
    pacer.observe(b, { limit: 10, remaining: 0, reset: S + 30 }, T + 50);
    pacer.observe(a, { limit: 10, remaining: 5, reset: S + 30 }, T + 60);
    expect(pacer.earliest(T + 70)).toEqual({ at: (S + 30) * 1000, cause: 'budget' });
  });

  it('lets a later send answered late replace an earlier budget', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const a = pacer.sent(T);
    const b = pacer.sent(T + 10);
    pacer.observe(a, { limit: 10, remaining: 0, reset: S + 30 }, T + 50);
    expect(pacer.earliest(T + 55).cause).toBe('budget');
    pacer.observe(b, { limit: 10, remaining: 5, reset: S + 30 }, T + 60);
    expect(pacer.earliest(T + 70).cause).not.toBe('budget');
  });

  it('ignores a transport error, incomplete headers and a reset in the past', () => {
    const pacer = new Pacer({ windows: minute, enforce: true });
    const a = pacer.sent(T);
    const b = pacer.sent(T + 1);
    const c = pacer.sent(T + 2);
    expect(pacer.inFlight).toBe(3);
    pacer.observe(a, undefined, T + 10);
    pacer.observe(b, { limit: 10, remaining: 0, reset: undefined }, T + 11);
    pacer.observe(c, { limit: 10, remaining: 0, reset: S - 5 }, T + 12);
    expect(pacer.inFlight).toBe(0);
    expect(pacer.earliest(T + 20).cause).not.toBe('budget');
  });
});

describe('Pacer, raw mode (enforce off)', () => {
  const minute: RateWindow[] = [{ name: 'minute', limit: 10, seconds: 60 }];

  it('does not space sends: before any answer, maxOvershoot + 1 in flight; then up to the budget the answer told', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: false });
    // Nothing told yet: all at once would make every request past a GCRA's one slot a strike.
    const burst = () => {
      let sent = 0;
      while (pacer.earliest(T).at <= T && sent < 100) {
        expect(pacer.earliest(T)).toEqual({ at: T, cause: 'ready' });
        pacer.sent(T);
        sent++;
      }
      return sent;
    };
    expect(burst()).toBe(3);
    expect(pacer.earliest(T)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'inflight' });
    // The first answer tells a fresh window: the rest of it at once, with the 2 still in flight counted.
    pacer.observe(1, { limit: 10, remaining: 9, reset: S + 1 }, T, 'admitted');
    expect(burst()).toBe(7);
    // Past the budget the server told, what holds the key is that budget (until an answer comes).
    expect(pacer.earliest(T)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'budget' });
  });

  it('does not space sends whose answers come back', () => {
    const pacer = new Pacer({ windows: perSecond(10), enforce: false });
    for (let i = 0; i < 100; i++) {
      expect(pacer.earliest(T + i)).toEqual({ at: T + i, cause: 'ready' });
      const seq = pacer.sent(T + i);
      pacer.observe(seq, { limit: 10, remaining: 9, reset: S + 1 }, T + i);
    }
  });

  it('lets at most maxOvershoot sends past a spent budget, then waits for an answer', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 0, reset: S + 30 }, T + 5);
    let beyond = 0;
    while (pacer.earliest(T + 10).at <= T + 10) {
      pacer.sent(T + 10);
      beyond++;
      expect(beyond).toBeLessThan(20);
    }
    expect(beyond).toBe(2);
    expect(pacer.earliest(T + 10)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'budget' });
  });

  it('after a 429, one request at a time until one is admitted (unless the ban risk is allowed)', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    const limited = pacer.sent(T);
    pacer.observe(limited, undefined, T + 5, 'refused');
    pacer.rateLimited(limited, true, T + 5);
    const probe = pacer.sent(T + 10);
    expect(pacer.earliest(T + 10)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'inflight' });
    pacer.observe(probe, undefined, T + 15, 'admitted');
    // Admitted: the key is back to its budget, several at once again.
    pacer.sent(T + 20);
    expect(pacer.earliest(T + 20)).toEqual({ at: T + 20, cause: 'ready' });
    const risky = new Pacer({ windows: minute, enforce: false, maxOvershoot: Number.POSITIVE_INFINITY });
    const first = risky.sent(T);
    risky.observe(first, undefined, T + 5, 'refused');
    risky.rateLimited(first, true, T + 5);
    risky.sent(T + 10);
    expect(risky.earliest(T + 10).at).toBe(T + 10);
  });

  it('against a server that announces no budget, keeps no more than maxOvershoot + 1 in flight', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    // Before any answer, nothing has been told: 3 in flight at most.
    for (let i = 0; i < 3; i++) pacer.sent(T);
    expect(pacer.earliest(T)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'inflight' });
    // An answer with no quota fields at all: still at most 3 in flight.
    pacer.observe(1, undefined, T + 5, 'admitted');
    expect(pacer.earliest(T + 5)).toEqual({ at: T + 5, cause: 'ready' });
    pacer.sent(T + 5);
    expect(pacer.earliest(T + 5)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'inflight' });
    pacer.observe(2, undefined, T + 6, 'admitted');
    expect(pacer.earliest(T + 6)).toEqual({ at: T + 6, cause: 'ready' });
    // A server that tells its budget is held to that instead: 9 left, 1 in flight, 8 more.
    pacer.observe(3, { limit: 10, remaining: 9, reset: S + 30 }, T + 8, 'admitted');
    for (let i = 0; i < 4; i++) pacer.sent(T + 8);
    expect(pacer.earliest(T + 8).at).toBe(T + 8);
  });

  it("after the server's word lapses, assumes no more than it ever showed left (a GCRA's 0), not a window", () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 0, reset: S + 1 }, T + 5, 'admitted');
    // A second later the word has lapsed: one request left, and the overshoot past it.
    const at = T + 1000;
    let sends = 0;
    while (pacer.earliest(at).at <= at && sends < 20) {
      pacer.sent(at);
      sends++;
    }
    expect(sends).toBe(3);
  });

  it('a look (peek) does not start the window a lapsed budget assumes: the next send does', () => {
    const sendsAt = (pacer: Pacer, at: number) => {
      let sends = 0;
      while (pacer.earliest(at).at <= at && sends < 20) {
        pacer.sent(at);
        sends++;
      }
      return sends;
    };
    const [looked, asked] = [true, false].map((peek) => {
      const pacer = new Pacer({ windows: minute, enforce: false });
      pacer.observe(pacer.sent(T), { limit: 10, remaining: 0, reset: S + 1 }, T + 5, 'admitted');
      // The word has lapsed: a status line looks, or a send asks (and starts a minute's window).
      expect(pacer.earliest(T + 2000, peek)).toEqual({ at: T + 2000, cause: 'ready' });
      // A send 40 s later (asked for, as the gate does), whose transport error leaves nothing in
      // flight and tells nothing.
      expect(pacer.earliest(T + 40_000).at).toBe(T + 40_000);
      const one = pacer.sent(T + 40_000);
      pacer.observe(one, undefined, T + 40_010, 'transport-error');
      return sendsAt(pacer, T + 63_000);
    });
    // Asked at 2 s, the assumed minute is over at 62 s: a fresh 1 and the overshoot. Looked at,
    // it began with the send at 40 s: its 1 is spent, the overshoot is left.
    expect(asked).toBe(3);
    expect(looked).toBe(2);
  });

  it('honours a custom maxOvershoot', () => {
    const pacer = new Pacer({ windows: minute, enforce: false, maxOvershoot: 4 });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 1, reset: S + 30 }, T + 5, 'admitted');
    let sends = 0;
    while (pacer.earliest(T + 10).at <= T + 10 && sends < 20) {
      pacer.sent(T + 10);
      sends++;
    }
    // The 1 left, then 4 beyond it.
    expect(sends).toBe(5);
  });

  it('goes on when an answer comes back', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 0, reset: S + 30 }, T + 5, 'admitted');
    const a = pacer.sent(T + 10);
    pacer.sent(T + 10);
    expect(pacer.earliest(T + 11)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'budget' });
    // The first 429 comes back: 0 left as of it, one sent since, one in flight.
    pacer.observe(a, { limit: 10, remaining: 0, reset: S + 30 }, T + 20, 'refused');
    expect(pacer.earliest(T + 21)).toEqual({ at: T + 21, cause: 'ready' });
  });

  it('waits for the reset when the overshoot is spent and nothing is in flight', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    const first = pacer.sent(T);
    pacer.observe(first, { limit: 10, remaining: 0, reset: S + 30 }, T + 5, 'admitted');
    const a = pacer.sent(T + 10);
    const b = pacer.sent(T + 10);
    // Both answered without rate-limit feedback (transport errors): nothing in flight, budget still spent.
    pacer.observe(a, undefined, T + 20);
    pacer.observe(b, undefined, T + 21);
    expect(pacer.inFlight).toBe(0);
    expect(pacer.earliest(T + 30)).toEqual({ at: (S + 30) * 1000, cause: 'budget' });
    expect(pacer.earliest((S + 30) * 1000)).toEqual({ at: (S + 30) * 1000, cause: 'ready' });
  });

  it('waits while more than maxOvershoot requests are in flight past the budget', () => {
    const pacer = new Pacer({ windows: minute, enforce: false });
    // Four requests sent, then the first answers: 2 left as of it.
    const a = pacer.sent(T);
    pacer.sent(T);
    pacer.sent(T);
    pacer.sent(T);
    pacer.observe(a, { limit: 10, remaining: 2, reset: S + 30 }, T + 5, 'admitted');
    // Budget: 2 less the 3 still in flight = -1 (not yet -2), but 3 in flight is more than 2: wait.
    expect(pacer.inFlight).toBe(3);
    expect(pacer.earliest(T + 6)).toEqual({ at: Number.POSITIVE_INFINITY, cause: 'budget' });
  });
});
