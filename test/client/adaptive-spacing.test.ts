import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LimiterKind } from '../../src/api/limiter-kinds.ts';
import type { RateWindow } from '../../src/api/plans.ts';
import { seededRandom } from '../../src/api/random.ts';
import { fullJitterMs } from '../../src/api/responses.ts';
import { AdaptiveSpacing } from '../../src/client/adaptive-spacing.ts';
import { Pacer } from '../../src/client/pacer.ts';

const T0 = 1_800_000_000_000;

describe('AdaptiveSpacing', () => {
  it('keeps no gap until a 429', () => {
    const s = new AdaptiveSpacing({ floorMs: 0, learnFloor: true });
    s.sent(1, T0);
    expect(s.earliest()).toBe(Number.NEGATIVE_INFINITY);
  });

  it('a limiter given as GCRA keeps its gap from the first send', () => {
    const s = new AdaptiveSpacing({ floorMs: 1015, learnFloor: false });
    s.sent(1, T0);
    expect(s.earliest()).toBe(T0 + 1015);
  });

  it('a headerless 429 halves the rate, and answers bring it back step by step', () => {
    const s = new AdaptiveSpacing({ floorMs: 0, learnFloor: false });
    s.sent(1, T0);
    s.sent(2, T0 + 100);
    s.rateLimited(2, false, 0, 1000, T0 + 105);
    expect(s.state().capMs).toBe(200);
    expect(s.earliest()).toBe(T0 + 100 + 200);
    const caps: number[] = [];
    for (let i = 0; i < 12; i++) {
      s.sent(3 + i, T0 + 1000 + i * 300);
      s.answered(3 + i, 0);
      caps.push(s.state().capMs);
    }
    // A tenth of the halved rate (1/200 ms) per answer: 1/200 + 10 * 1/2000 = 1/100 after ten.
    expect(caps[0]).toBeCloseTo(1 / (1 / 200 + 1 / 2000), 6);
    expect(caps[8]).toBeCloseTo(1 / (1 / 200 + 9 / 2000), 6);
    expect(caps.slice(0, 9).every((c, i) => i === 0 || c < (caps[i - 1] as number))).toBe(true);
    // No floor: the cap goes on falling, and drops out below a millisecond.
    expect(s.state().decreases).toBe(1);
  });

  it('a 429 that told its wait pauses, but cuts no rate', () => {
    const s = new AdaptiveSpacing({ floorMs: 0, learnFloor: false });
    s.sent(1, T0);
    s.sent(2, T0 + 100);
    s.rateLimited(2, true, 0, 1000, T0 + 105);
    expect(s.state()).toMatchObject({ capMs: 0, decreases: 0 });
  });

  it('learns a floor from the gap a 429 came at, in paced mode at least the plan spacing', () => {
    const s = new AdaptiveSpacing({ floorMs: 0, learnFloor: true });
    s.sent(1, T0);
    s.sent(2, T0 + 995);
    s.rateLimited(2, true, 1004, 1000, T0 + 1000);
    const floor = s.state().floorMs;
    expect(floor).toBeCloseTo(1004 * 1.02 + 5, 6);
    expect(s.state().inferred).toBe('gcra');
    // A 429 at a gap shorter than the floor proves nothing new.
    s.sent(3, T0 + 1500);
    s.rateLimited(3, true, 1004, 1000, T0 + 1505);
    expect(s.state().floorMs).toBe(floor);
    // One at a gap no shorter than the floor raises it.
    s.sent(4, T0 + 1500 + 1100);
    s.rateLimited(4, true, 1004, 1000, T0 + 2605);
    expect(s.state().floorMs).toBeCloseTo(1100 * 1.02 + 5, 6);
    // One after a long wait (a pause, a spent window's hold) was refused by a quota, not for its gap.
    s.sent(5, T0 + 1500 + 1100 + 3000);
    s.rateLimited(5, true, 1004, 1000, T0 + 5605);
    expect(s.state().floorMs).toBeCloseTo(1100 * 1.02 + 5, 6);
  });

  it('counts 429s in a row until an answer', () => {
    const s = new AdaptiveSpacing({ floorMs: 0, learnFloor: false });
    for (let i = 1; i <= 3; i++) {
      s.sent(i, T0 + i);
      s.rateLimited(i, false, 0, 1000, T0 + i + 1);
    }
    expect(s.consecutive).toBe(3);
    // Sent before the latest 429 came back: admitted while the others were not, it ends nothing.
    s.sent(4, T0 + 2);
    s.answered(4, 0);
    expect(s.consecutive).toBe(3);
    s.sent(5, T0 + 10);
    s.answered(5, 0);
    expect(s.consecutive).toBe(0);
  });
});

/** A limiter between sends, as nginx limit_req keeps it: excess drains at `rate`, rejects beyond `burst`. */
function gcra(intervalMs: number, burst: number) {
  let tat = Number.NEGATIVE_INFINITY;
  return (at: number): boolean => {
    const next = Math.max(tat, at) + intervalMs;
    if (next - at > (burst + 1) * intervalMs + 1e-9) return false;
    tat = next;
    return true;
  };
}

/** A fixed window that tells nothing (no headers, no Retry-After). */
function fixedWindow(limit: number, windowMs: number) {
  let start = Number.NEGATIVE_INFINITY;
  let count = 0;
  return (at: number): boolean => {
    if (at >= start + windowMs) {
      start = Math.floor(at / windowMs) * windowMs;
      count = 0;
    }
    if (count >= limit) return false;
    count++;
    return true;
  };
}

interface Simulated {
  sent: number;
  admitted: number;
  rejected: number;
  /** Sends that left while a 429's pause held. */
  duringPause: number;
}

/**
 * One key's sends against a limiter that says nothing but 429, on a simulated clock: demand at
 * `demandPerS` (a backlog when held), timers late by up to 3 ms, loopback 0.2 to 2 ms each way,
 * every 429 answered as the client does (the key's backoff in a row, the rate cut).
 */
function simulate(o: {
  windows: RateWindow[];
  enforce: boolean;
  limiter?: LimiterKind;
  admit: (at: number) => boolean;
  demandPerS: number;
  seconds: number;
  seed: number;
}): Simulated {
  const random = seededRandom(o.seed);
  const pacer = new Pacer({ windows: o.windows, enforce: o.enforce, limiter: o.limiter });
  const end = T0 + o.seconds * 1000;
  const out: Simulated = { sent: 0, admitted: 0, rejected: 0, duringPause: 0 };
  let due = T0;
  let now = T0;
  let pausedUntil = 0;
  while (due < end) {
    // As the gate does: wait for what holds the send, then ask again (a pause's end is not a slot).
    let t = Math.max(now, due);
    for (let e = pacer.earliest(t); e.at > t; e = pacer.earliest(t)) t = e.at;
    const sendAt = t + random() * 3;
    if (sendAt >= end) break;
    if (sendAt < pausedUntil) out.duringPause++;
    const seq = pacer.sent(sendAt);
    out.sent++;
    const arrival = sendAt + 0.2 + random() * 1.8;
    const ok = o.admit(arrival);
    const answeredAt = arrival + 0.2 + random() * 1.8;
    pacer.observe(seq, undefined, answeredAt, ok ? 'admitted' : 'refused');
    if (ok) out.admitted++;
    else {
      out.rejected++;
      const inRow = pacer.rateLimited(seq, false, answeredAt);
      pausedUntil = answeredAt + fullJitterMs(inRow, 1000, 60_000, random) + 5;
      pacer.pause(pausedUntil, answeredAt);
    }
    now = answeredAt;
    due += 1000 / o.demandPerS;
  }
  return out;
}

const perMinute = (limit: number): RateWindow[] => [{ name: 'minute', limit, seconds: 60 }];

describe('the pacer against limiters that say nothing but 429', () => {
  it('raw mode at 3x a GCRA of 1/s for 60 s: a few 429s, none sent inside a pause', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const r = simulate({
          windows: perMinute(60),
          enforce: false,
          admit: gcra(1000, 0),
          demandPerS: 3,
          seconds: 60,
          seed,
        });
        expect(r.rejected).toBeLessThanOrEqual(20);
        expect(r.duringPause).toBe(0);
        // Not starved either: the limiter's rate is mostly used.
        expect(r.admitted).toBeGreaterThanOrEqual(30);
      }),
      { numRuns: 50 },
    );
  });

  it('paced at the plan rate against a GCRA of the same rate: at most one 429 in 5 minutes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const r = simulate({
          windows: perMinute(60),
          enforce: true,
          admit: gcra(1000, 0),
          demandPerS: 2,
          seconds: 300,
          seed,
        });
        expect(r.rejected).toBeLessThanOrEqual(1);
        expect(r.admitted).toBeGreaterThanOrEqual(0.95 * 300);
      }),
      { numRuns: 30 },
    );
  });

  it('told the limiter is a GCRA, the same run meets no 429 at all', () => {
    const r = simulate({
      windows: perMinute(60),
      enforce: true,
      limiter: 'gcra',
      admit: gcra(1000, 0),
      demandPerS: 2,
      seconds: 300,
      seed: 7,
    });
    expect(r.rejected).toBe(0);
    expect(r.admitted).toBeGreaterThanOrEqual(0.95 * 300);
  });

  it('raw mode at 3x a fixed window of 10 per 10 s that tells nothing: few 429s, no storm', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const r = simulate({
          windows: [{ name: 'window', limit: 10, seconds: 10 }],
          enforce: false,
          admit: fixedWindow(10, 10_000),
          demandPerS: 3,
          seconds: 60,
          seed,
        });
        expect(r.rejected).toBeLessThanOrEqual(20);
        expect(r.duringPause).toBe(0);
      }),
      { numRuns: 50 },
    );
  });
});
