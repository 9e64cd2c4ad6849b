import { describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { quotaState, readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { now } from '../../src/client/clock.ts';
import { AbortedError, type Admission, Gate } from '../../src/client/gate.ts';
import { Pacer } from '../../src/client/pacer.ts';
import { inSimulatedTime } from '../helpers/simulated.ts';

/** One send per 20 ms: small enough to keep the tests short, real timers and the real clock. */
// The gate admits a send up to this early (a timer cannot wait less), except after a pause.
const TOLERANCE_MS = 1;
const TINY: RateWindow[] = [{ name: 'tiny', limit: 1, seconds: 0.02 }];
const FAR = Math.ceil(Date.now() / 1000) + 3600;

const never = new AbortController().signal;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Settles to 'pending' if `p` has not settled after `ms`. */
async function stateAfter(p: Promise<unknown>, ms: number): Promise<'resolved' | 'rejected' | 'pending'> {
  return Promise.race([
    p.then(
      () => 'resolved' as const,
      () => 'rejected' as const,
    ),
    sleep(ms).then(() => 'pending' as const),
  ]);
}

/** A raw-mode pacer whose budget is spent with one request in flight: the next send waits for an answer. */
function waitingForAnswer(): { pacer: Pacer; inFlight: number } {
  const pacer = new Pacer({
    windows: [{ name: 'minute', limit: 10, seconds: 60 }],
    enforce: false,
    maxOvershoot: 1,
  });
  const a = pacer.sent(now());
  const b = pacer.sent(now());
  pacer.observe(a, { limit: 10, remaining: 0, reset: FAR }, now());
  expect(pacer.earliest(now()).at).toBe(Number.POSITIVE_INFINITY);
  return { pacer, inFlight: b };
}

describe('Gate', () => {
  it('admits in arrival order, each when the pacer allows', async () => {
    const pacer = new Pacer({ windows: TINY, enforce: true, guardMs: 0 });
    const gate = new Gate(pacer);
    const order: number[] = [];
    // The times the gate admitted each send, as it records them in the pacer: read after the
    // promise settles instead, a callback run late on a busy machine would shorten the next gap.
    const sentAt: number[] = [];
    const sent = pacer.sent.bind(pacer);
    pacer.sent = (at: number) => {
      sentAt.push(at);
      return sent(at);
    };
    const tBefore = now();
    const pending = [0, 1, 2, 3, 4].map((i) =>
      gate.acquire(never).then((admission) => {
        order.push(i);
        return admission;
      }),
    );
    const tQueued = now();
    const admissions = await Promise.all(pending);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < sentAt.length; i++) {
      expect((sentAt[i] as number) - (sentAt[i - 1] as number)).toBeGreaterThanOrEqual(20 - TOLERANCE_MS);
    }
    for (const a of admissions) expect(a.backoffWaitMs).toBe(0);
    // The last caller was queued by tQueued and admitted no earlier than 4 spacings after the first send.
    expect((admissions[4] as Admission).pacingWaitMs).toBeGreaterThanOrEqual(
      80 - 4 * TOLERANCE_MS - (tQueued - tBefore),
    );
  });

  it('admits at once when nothing holds it back', async () => {
    const pacer = new Pacer({ windows: TINY, enforce: false });
    const gate = new Gate(pacer);
    const before = now();
    const a = await gate.acquire(never);
    const after = now();
    expect(a.backoffWaitMs).toBe(0);
    expect(a.pacingWaitMs).toBeGreaterThanOrEqual(0);
    expect(a.pacingWaitMs).toBeLessThanOrEqual(after - before);
  });

  it('reports the wait for a pause as backoff, not pacing', async () => {
    const pacer = new Pacer({ windows: TINY, enforce: true, guardMs: 0 });
    const gate = new Gate(pacer);
    const t0 = now();
    const until = t0 + 40;
    pacer.pause(until);
    const pending = gate.acquire(never);
    const t1 = now();
    const a = await pending;
    const t2 = now();
    expect(t2).toBeGreaterThanOrEqual(until);
    // Queued between t0 and t1, held until `until`: backoff is exactly until - queuedAt.
    expect(a.backoffWaitMs).toBeGreaterThanOrEqual(until - t1);
    expect(a.backoffWaitMs).toBeLessThanOrEqual(until - t0);
    expect(a.pacingWaitMs).toBeGreaterThanOrEqual(0);
    expect(a.backoffWaitMs + a.pacingWaitMs).toBeLessThanOrEqual(t2 - t0);
  });

  it('splits a pause followed by pacing into backoff and pacing', async () => {
    // After the pause, the 200 ms window of the send before it still holds the next one.
    const pacer = new Pacer({
      windows: [{ name: 'slow', limit: 1, seconds: 0.2 }],
      enforce: true,
      guardMs: 0,
    });
    const gate = new Gate(pacer);
    const t0 = now();
    pacer.sent(t0);
    pacer.pause(t0 + 30);
    const pending = gate.acquire(never);
    const t1 = now();
    const a = await pending;
    expect(now()).toBeGreaterThanOrEqual(t0 + 200 - TOLERANCE_MS);
    expect(a.backoffWaitMs).toBeGreaterThanOrEqual(t0 + 30 - t1);
    expect(a.backoffWaitMs).toBeLessThanOrEqual(30);
    // The rest, up to at least the end of the window span, is pacing.
    expect(a.pacingWaitMs).toBeGreaterThanOrEqual(200 - 30 - TOLERANCE_MS);
  });

  // Regression: only the caller at the head of the queue once counted a pause as backoff.
  it('reports a pause as backoff for every caller queued behind it', async () => {
    const pacer = new Pacer({ windows: [{ name: 'second', limit: 100, seconds: 1 }], enforce: false });
    const gate = new Gate(pacer);
    const t0 = now();
    pacer.pause(t0 + 40);
    const [first, second] = await Promise.all([gate.acquire(never), gate.acquire(never)]);
    expect(first.backoffWaitMs).toBeGreaterThan(0);
    // Raw mode: there is no pacing, so all of the second caller's wait is the pause.
    expect(second.backoffWaitMs).toBeGreaterThan(0);
  });

  it('ends a pause wait with AbortedError when the signal aborts', async () => {
    const pacer = new Pacer({ windows: TINY, enforce: true, guardMs: 0 });
    const controller = new AbortController();
    const gate = new Gate(pacer);
    pacer.pause(now() + 60_000);
    const pending = gate.acquire(controller.signal);
    expect(await stateAfter(pending, 20)).toBe('pending');
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });

  it('rejects at once when the signal is already aborted, and later callers go on with a fresh signal', async () => {
    const pacer = new Pacer({ windows: TINY, enforce: false });
    let controller = new AbortController();
    const gate = new Gate(pacer);
    controller.abort();
    await expect(gate.acquire(controller.signal)).rejects.toThrow(AbortedError);
    // The client swaps in a new signal after interrupting waiting callers.
    controller = new AbortController();
    await expect(gate.acquire(controller.signal)).resolves.toMatchObject({ backoffWaitMs: 0 });
  });

  it('waits for an answer when the pacer says Infinity, and goes on when told of one', async () => {
    const { pacer, inFlight } = waitingForAnswer();
    const gate = new Gate(pacer);
    const pending = gate.acquire(never);
    expect(await stateAfter(pending, 30)).toBe('pending');
    pacer.observe(inFlight, { limit: 10, remaining: 5, reset: FAR }, now());
    gate.responded();
    const a = await pending;
    expect(a.pacingWaitMs).toBeGreaterThan(0);
    expect(a.backoffWaitMs).toBe(0);
  });

  it('ends a wait for an answer with AbortedError', async () => {
    const { pacer } = waitingForAnswer();
    const controller = new AbortController();
    const gate = new Gate(pacer);
    const first = gate.acquire(controller.signal);
    const second = gate.acquire(controller.signal);
    expect(await stateAfter(first, 20)).toBe('pending');
    controller.abort();
    await expect(first).rejects.toBeInstanceOf(AbortedError);
    await expect(second).rejects.toBeInstanceOf(AbortedError);
  });

  it("counts the wait under the server's told budget apart, and names the hold once in the fields that told it", () =>
    inSimulatedTime(async () => {
      const pacer = new Pacer({ windows: [{ name: 'minute', limit: 60, seconds: 60 }], enforce: true });
      const told = pacer.toldFields.bind(pacer);
      let named = 0;
      pacer.toldFields = () => {
        named++;
        return told();
      };
      const gate = new Gate(pacer);
      const headers = { ratelimit: 'remaining=0, reset=10' };
      const start = now();
      pacer.observe(
        pacer.sent(start),
        quotaState(readRateLimit(headers, start), start, headers),
        start,
        'admitted',
      );
      // Three callers behind a budget spent for 10 s: the first waits it out, the others behind it
      // waited through the same hold, then the plan's spacing of a second each.
      const [a, b, c] = (await Promise.all([0, 1, 2].map(() => gate.acquire(never)))) as [
        Admission,
        Admission,
        Admission,
      ];
      for (const x of [a, b, c]) expect(x.budgetWaitMs).toBeCloseTo(10_000, -1);
      expect(a.pacingWaitMs).toBeCloseTo(10_000, -1);
      expect(c.pacingWaitMs - c.budgetWaitMs).toBeCloseTo(2_000, -2);
      expect(gate.budgetHeld()).toBeCloseTo(10_000, -1);
      expect(gate.budgetTold).toBe('RateLimit remaining=0, reset=10');
      expect(named).toBe(1);
      // Pacing to the plan alone is no hold of the server's.
      const d = await gate.acquire(never);
      expect(d.budgetWaitMs).toBe(0);
      expect(d.pacingWaitMs).toBeGreaterThan(500);
    }));
});
