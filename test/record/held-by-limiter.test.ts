import { describe, expect, it } from 'vitest';
import { classifyResponse } from '../../src/api/responses.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { HeldByLimiter, type HeldSnapshot } from '../../src/record/held-by-limiter.ts';
import { HOLD_MARGIN_FLOOR_MS, ServiceSpread } from '../../src/record/service-spread.ts';

/**
 * Synthetic runs: closed-loop users (each sends again as soon as it is answered) against a service
 * of known latency, behind a queue, a slow-down or nothing, every attempt fed in the order answered.
 */

interface Sent {
  user: number;
  sentAt: number;
}

/** Given a send, when it is answered (and its status); called in order of sending. */
type Target = (sentAt: number) => { receivedAt: number; status: number };

function closedLoop(users: number, seconds: number, target: Target, operation = 'listPets'): AttemptRecord[] {
  const next: Sent[] = Array.from({ length: users }, (_, user) => ({ user, sentAt: 1000 + user * 0.3 }));
  const attempts: AttemptRecord[] = [];
  const end = 1000 + seconds * 1000;
  for (;;) {
    next.sort((a, b) => a.sentAt - b.sentAt);
    const s = next[0] as Sent;
    if (s.sentAt >= end) break;
    const { receivedAt, status } = target(s.sentAt);
    attempts.push(attempt(s.sentAt, receivedAt, status, operation));
    s.sentAt = receivedAt + 0.2;
  }
  return attempts.sort((a, b) => a.receivedAt - b.receivedAt);
}

/** An open model: a send every `intervalMs`, whenever the answers come. */
function openLoop(intervalMs: number, seconds: number, target: Target): AttemptRecord[] {
  const attempts: AttemptRecord[] = [];
  for (let sentAt = 1000; sentAt < 1000 + seconds * 1000; sentAt += intervalMs) {
    const { receivedAt, status } = target(sentAt);
    attempts.push(attempt(sentAt, receivedAt, status, 'listPets'));
  }
  return attempts.sort((a, b) => a.receivedAt - b.receivedAt);
}

const delayedBy = (attempts: AttemptRecord[], ms: number) =>
  attempts.filter((a) => a.status === 200 && a.receivedAt - a.sentAt > ms).length;

function attempt(sentAt: number, receivedAt: number, status: number, operation: string): AttemptRecord {
  return {
    operation: { id: operation },
    attempt: 1,
    keyLabel: 'free',
    scheduledAt: undefined,
    sentAt,
    receivedAt,
    status,
    kind: classifyResponse({ status }),
    errorCode: undefined,
    headers: {},
    body: { text: '', json: undefined },
    pacingWaitMs: 0,
    backoffWaitMs: 0,
    retried: false,
  } as unknown as AttemptRecord;
}

/**
 * Answers in unbroken climbs of at least `least`: consecutive answers (in the order answered), each
 * held over `floorMs` and `stepMs` longer than the one before.
 */
function steadyClimbs(attempts: AttemptRecord[], stepMs: number, floorMs: number, least: number): number {
  let total = 0;
  let run = 0;
  let previous = Number.NaN;
  for (const a of attempts) {
    const latency = a.receivedAt - a.sentAt;
    const climbs = latency > floorMs && Math.abs(latency - previous - stepMs) < 1;
    if (!climbs) {
      if (run >= least) total += run;
      run = latency > floorMs ? 1 : 0;
    } else run++;
    previous = latency;
  }
  return run >= least ? total + run : total;
}

function detect(attempts: AttemptRecord[]): HeldSnapshot | undefined {
  const held = new HeldByLimiter();
  for (const a of attempts) held.observe(a);
  return held.snapshot();
}

/** A seeded uniform [0, 1): the same jitter every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** nginx limit_req without nodelay: the excess waits and leaves one per interval; past the burst, a 429. */
function queue(intervalMs: number, burst: number, serviceMs: number, jitter = () => 0): Target {
  let lastRelease = Number.NEGATIVE_INFINITY;
  return (sentAt) => {
    const release = Math.max(sentAt, lastRelease + intervalMs);
    if ((release - sentAt) / intervalMs > burst) return { receivedAt: sentAt + 1, status: 429 };
    lastRelease = release;
    return { receivedAt: release + serviceMs + jitter(), status: 200 };
  };
}

/** express-slow-down: past `after` requests in the window, each waits `stepMs` more than the last. */
function slowDown(
  after: number,
  stepMs: number,
  windowMs: number,
  serviceMs: number,
  maxMs = Infinity,
  late: () => number = () => 0,
): Target {
  let windowStart = Number.NEGATIVE_INFINITY;
  let used = 0;
  return (sentAt) => {
    if (sentAt >= windowStart + windowMs) {
      windowStart = sentAt;
      used = 0;
    }
    used++;
    const delay = Math.min(maxMs, Math.max(0, used - after) * stepMs);
    return { receivedAt: sentAt + delay + serviceMs + (delay > 0 ? late() : 0), status: 200 };
  };
}

function service(latencyMs: number, jitterMs = 0, seed = 1): Target {
  const r = random(seed);
  return (sentAt) => ({ receivedAt: sentAt + latencyMs + r() * jitterMs, status: 200 });
}

describe('HeldByLimiter', () => {
  it('names a queue that releases 2 a second: nearly every answer after the first, held by the queue', () => {
    const attempts = closedLoop(4, 15, queue(500, 5, 2));
    const held = detect(attempts);
    expect(held?.queued).toBe(held?.responses);
    expect(held?.slowed).toBe(0);
    // The first answer was not held; every later one waited for the queue.
    expect(held?.responses).toBe(attempts.length - 1);
    expect(held?.intervalMs).toBeCloseTo(500, 0);
    // Four users in a queue of one release per 500 ms: each waits about three releases and a half.
    expect(held?.longestMs).toBeGreaterThan(1400);
    expect(held?.longestMs).toBeLessThan(2000);
  });

  it('names a queue whose overflow is refused, with a jittery service behind it', () => {
    const r = random(7);
    const attempts = closedLoop(
      12,
      15,
      queue(100, 3, 20, () => r() * 4),
    );
    expect(attempts.some((a) => a.status === 429)).toBe(true);
    const held = detect(attempts);
    const admitted = attempts.filter((a) => a.status === 200).length;
    expect(held?.queued).toBeGreaterThan(admitted * 0.8);
    expect(held?.intervalMs).toBeGreaterThan(95);
    expect(held?.intervalMs).toBeLessThan(105);
  });

  it('names a slow-down: 100 ms more per request past the fifth in its minute', () => {
    const attempts = closedLoop(4, 15, slowDown(5, 100, 60_000, 2));
    const held = detect(attempts);
    const delayed = attempts.filter((a) => a.receivedAt - a.sentAt > 50);
    expect(held?.slowed).toBe(held?.responses);
    expect(held?.responses).toBe(delayed.length);
    expect(held?.stepMs).toBeCloseTo(100, 0);
    expect(held?.longestMs).toBe(Math.max(...delayed.map((a) => Math.round(a.receivedAt - a.sentAt - 2))));
  });

  it.each([2, 4])(
    'names a slow-down that reaches its cap, the capped answers held by it too (%i users)',
    (users) => {
      // Four users at the cap are answered at a steady interval, as from a queue: still the slow-down's.
      const attempts = closedLoop(users, 20, slowDown(3, 50, 60_000, 5, 400));
      const held = detect(attempts);
      const delayed = attempts.filter((a) => a.receivedAt - a.sentAt > 30).length;
      expect(held?.responses).toBe(delayed);
      expect(held?.slowed).toBe(delayed);
      expect(held?.kind).toBe('slow-down');
      expect(held?.longestMs).toBe(400);
    },
  );

  it('names a slow-down on a busy machine, its timers late by up to 13 ms, up to its cap and at it', () => {
    // As express-slow-down read under load: steps of 100 ms measured as 110, 87, 104 ...
    const r = random(17);
    const attempts = closedLoop(
      4,
      20,
      slowDown(10, 100, 60_000, 15, 1500, () => r() * 13),
    );
    const held = detect(attempts);
    const delayed = attempts.filter((a) => a.receivedAt - a.sentAt > 60).length;
    expect(held?.kind).toBe('slow-down');
    expect(held?.responses).toBeGreaterThan(delayed * 0.8);
    expect(held?.stepMs).toBeGreaterThan(90);
    expect(held?.stepMs).toBeLessThan(110);
  });

  it('names part of a slow-down whose window resets every 3 s: those in flight across a reset break its steps', () => {
    const attempts = closedLoop(4, 15, slowDown(5, 100, 3000, 2));
    const held = detect(attempts);
    const delayed = attempts.filter((a) => a.receivedAt - a.sentAt > 50).length;
    // Answers of a window's climb that come in between the last one's stragglers cannot be told; a
    // stretch of eight or more answers in a row (the detector's window), each held one step more
    // than the one before, must be. This schedule has three such (14, 9 and 9 answers) of 76 held.
    const climbs = steadyClimbs(attempts, 100, 50, 8);
    expect(climbs).toBeGreaterThan(0);
    expect(climbs).toBeLessThan(delayed);
    expect(held?.slowed).toBe(held?.responses);
    expect(held?.responses).toBeGreaterThanOrEqual(climbs);
    expect(held?.responses).toBeLessThanOrEqual(delayed);
  });

  it('names a queue fed at a steady rate above its own, past its burst refused', () => {
    const attempts = openLoop(200, 15, queue(500, 5, 2));
    const held = detect(attempts);
    expect(held?.kind).toBe('queue');
    expect(held?.responses).toBe(delayedBy(attempts, 50));
    expect(held?.intervalMs).toBe(500);
  });

  it('tells a slow-down fed at a steady rate by where its climb stops, at its cap; before, names no kind', () => {
    // Sends every 300 ms climb by 50 ms each, into a queue or a slow-down alike: no kind is told.
    const climbing = openLoop(300, 15, slowDown(5, 50, 60_000, 2));
    expect(detect(climbing)?.kind).toBe('unknown');
    expect(detect(climbing)?.responses).toBeGreaterThan(delayedBy(climbing, 30) * 0.9);
    // At its cap, answers come as the sends do (every 300 ms), no longer every 350: a slow-down's.
    const capped = openLoop(300, 30, slowDown(5, 50, 60_000, 2, 500));
    const held = detect(capped);
    expect(held?.kind).toBe('slow-down');
    expect(held?.responses).toBeGreaterThan(delayedBy(capped, 30) * 0.9);
    expect(held?.stepMs).toBe(50);
  });

  it.each([
    ['uniformly slow (200 ms)', service(200)],
    ['slow and jittery (200 ms + up to 100)', service(200, 100)],
    ['jittery (5 ms + up to 50)', service(5, 50, 3)],
    ['fast, with heavy jitter (1 ms + up to 500)', service(1, 500, 5)],
  ])('names nothing held by a service %s', (_, target) => {
    for (const users of [1, 4, 16]) expect(detect(closedLoop(users, 30, target))).toBeUndefined();
  });

  it.each([
    ['uniformly slow (200 ms)', service(200)],
    ['slow and jittery (200 ms + up to 100)', service(200, 100, 11)],
    ['jittery (5 ms + up to 50)', service(5, 50, 13)],
  ])('names nothing held by a service %s, sent to at a steady rate (a paced run)', (_, target) => {
    for (const interval of [20, 100, 500]) expect(detect(openLoop(interval, 30, target))).toBeUndefined();
  });

  it('names nothing held by a service that does its work one request at a time', () => {
    // Answers back to back, 50 ms apart, each waiting for the ones before: the service's own queue.
    let free = 0;
    const serial: Target = (sentAt) => {
      free = Math.max(free, sentAt) + 50;
      return { receivedAt: free, status: 200 };
    };
    expect(detect(closedLoop(4, 30, serial))).toBeUndefined();
  });

  it('keeps a key and an operation apart: each has its own service latency', () => {
    const held = new HeldByLimiter();
    // A slow operation of one key must not make another key's fast answers look held, nor its own.
    for (const a of closedLoop(4, 10, service(300), 'slowReport')) held.observe(a);
    for (const a of closedLoop(4, 10, service(2), 'listPets')) held.observe(a);
    expect(held.snapshot()).toBeUndefined();
  });
});

describe('HeldByLimiter, the service latency it holds answers against', () => {
  it('is that of successes: one quick error does not make a steadily paced, slow service look queued', () => {
    // Sends every 300 ms (a paced run), each answered in 200 ms, but the first: a 404 in 2 ms.
    const attempts = Array.from({ length: 40 }, (_, i) =>
      attempt(1000 + i * 300, 1000 + i * 300 + (i === 0 ? 2 : 200), i === 0 ? 404 : 200, 'getPet'),
    );
    expect(detect(attempts)).toBeUndefined();
    // Were the quick first answer a success, this would be a queue's timing exactly (one with a
    // standing backlog of 198 ms, fed at its rate), and it is read as one.
    const quickSuccess = attempts.map((a, i) => (i === 0 ? { ...a, status: 200 } : a));
    expect(detect(quickSuccess)?.kind).toBe('queue');
  });
});

/**
 * The pet store server on loopback, two busy-looping processes on two cores, as a `capacity` run
 * measured it: service time p50 0.35 ms, p90 2.5, p99 8.4, the longest 34 ms. Now and then the
 * machine slows every answer alike for a stretch (`stretchMs` more for `stretch` answers in a row).
 */
function loopbackUnderLoad(seed: number, stretchMs = 0, stretch = 0): Target {
  const jitter = loopbackJitter(seed);
  let answered = 0;
  return (sentAt) => {
    const slowed = stretch > 0 && answered++ % 500 < stretch ? stretchMs : 0;
    return { receivedAt: sentAt + 0.07 + jitter() + slowed, status: 200 };
  };
}

/** The service time beyond its fastest of that loaded loopback, ms. */
function loopbackJitter(seed: number): () => number {
  const r = random(seed);
  return () => {
    const u = r();
    return u < 0.7 ? r() * 0.6 : u < 0.9 ? 0.6 + r() * 2.4 : u < 0.99 ? 3 + r() * 5 : 8 + r() * 26;
  };
}

describe('HeldByLimiter, a hold against the service spread', () => {
  it.each([
    ['its own jitter', 0, 0],
    ['a stretch of every answer 4 ms slower', 4, 40],
    ['a stretch of every answer 8 ms slower', 8, 40],
  ])('names nothing held by a quick service paced at 175/s with %s', (_, stretchMs, stretch) => {
    // The sends' steady interval comes back as steady gaps between answers: no queue of the target's.
    for (const seed of [1, 2, 3, 4]) {
      const attempts = openLoop(1000 / 175, 20, loopbackUnderLoad(seed, stretchMs, stretch));
      expect(detect(attempts), `seed ${seed}`).toBeUndefined();
    }
  });

  it('names a queue releasing 20 a second behind that jittery service, at its rate', () => {
    const attempts = closedLoop(4, 15, queue(50, 5, 0.07, loopbackJitter(6)));
    const held = detect(attempts);
    const admitted = attempts.filter((a) => a.status === 200).length;
    expect(held?.kind).toBe('queue');
    // An answer late by more than a few ms breaks the steady gaps of the windows it is in.
    expect(held?.responses).toBeGreaterThan(admitted * 0.7);
    expect(held?.intervalMs).toBeGreaterThan(45);
    expect(held?.intervalMs).toBeLessThan(55);
  });
});

describe('HeldByLimiter, a queue whose holds cover every length', () => {
  it('names a queue filled slowly, its holds growing 5 ms a request to 2 s: the margin does not run away', () => {
    // Sends every 45 ms into releases every 50 ms: holds of 0, 5, 10 ... up to 40 releases, then a
    // refusal for every tenth send. Holds under the margin must not raise it past the ones above.
    const attempts = openLoop(45, 30, queue(50, 40, 0.07, loopbackJitter(8)));
    const held = detect(attempts);
    expect(held?.kind).toBe('queue');
    expect(held?.responses).toBeGreaterThan(delayedBy(attempts, 200) * 0.85);
    expect(held?.intervalMs).toBeGreaterThan(49);
    expect(held?.intervalMs).toBeLessThan(51);
  });
});

describe('ServiceSpread', () => {
  it('keeps its floor for a quick service, and rises to three times the p99 of a jittery one', () => {
    const quick = new ServiceSpread();
    const r = random(9);
    for (let i = 0; i < 10_000; i++) quick.observe(r() * 2);
    expect(quick.marginMs).toBe(HOLD_MARGIN_FLOOR_MS);
    const jittery = new ServiceSpread();
    for (let i = 0; i < 10_000; i++) jittery.observe(r() * 8);
    expect(jittery.marginMs).toBeGreaterThan(3 * 7.8);
    expect(jittery.marginMs).toBeLessThan(3 * 8.1);
  });

  it("is not raised by a limiter's waits: holds above the margin never enter it", () => {
    const spread = new ServiceSpread();
    const r = random(10);
    for (let i = 0; i < 10_000; i++) spread.observe(i % 10 === 0 ? 500 + r() * 2000 : r() * 2);
    expect(spread.marginMs).toBe(HOLD_MARGIN_FLOOR_MS);
  });

  it('stays under 150 ms whatever the holds under it: a queue filled slowly over and over', () => {
    // Holds of every length up to 300 ms: each margin has holds just under it, which would raise it
    // threefold at each reading, past every hold, were the holds it reads not capped.
    const spread = new ServiceSpread();
    const r = random(11);
    for (let i = 0; i < 50_000; i++) spread.observe(r() * 300);
    expect(spread.marginMs).toBeGreaterThan(140);
    expect(spread.marginMs).toBeLessThanOrEqual(150);
  });

  it('reads no p99 from a run of few answers: its first slow ones do not set the bar', () => {
    const spread = new ServiceSpread();
    for (let i = 0; i < 100; i++) spread.observe(i < 3 ? 9 : 0.5);
    expect(spread.marginMs).toBe(HOLD_MARGIN_FLOOR_MS);
  });
});
