import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient } from '../../src/client/client.ts';
import { MAX_TIMER_MS, now, sleepUntil } from '../../src/client/clock.ts';
import { AbortedError, Gate, HeldPastEndError } from '../../src/client/gate.ts';
import { Pacer } from '../../src/client/pacer.ts';
import { hostileTarget } from '../helpers/hostile-target.ts';

/**
 * A server may announce any wait: a Retry-After of 31 years, a Reset in milliseconds read as
 * seconds. Node fires a timer longer than 2^31-1 ms after 1 ms (with a warning), so an unguarded wait
 * of that length spins. Every timer armed while waiting is watched: none beyond the limit, and only
 * a few in all (a spin would arm one a millisecond).
 */

const DELAYS = fc.oneof(
  fc.constantFrom(0, 1, MAX_TIMER_MS - 1, MAX_TIMER_MS, MAX_TIMER_MS + 1, 2 * MAX_TIMER_MS, 1e12),
  fc.integer({ min: 0, max: 2 ** 32 }),
  fc.double({ min: 0, max: 1e12, noNaN: true }),
);
/** How long each case watches a wait under way: a spin would arm about this many timers. */
const WATCH_MS = 25;
const realSetTimeout = globalThis.setTimeout;
const pause = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

/** Runs `body` with every setTimeout recorded; the delays asked for. */
async function timersArmedBy(body: () => Promise<void>): Promise<number[]> {
  const spy = vi.spyOn(globalThis, 'setTimeout');
  try {
    await body();
    return spy.mock.calls.map((call) => Number(call[1] ?? 0));
  } finally {
    spy.mockRestore();
  }
}

function expectNoOverflowNorSpin(delays: number[]): void {
  for (const delay of delays) expect(delay).toBeLessThanOrEqual(MAX_TIMER_MS);
  expect(delays.length).toBeLessThan(WATCH_MS / 3);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('waits of any length', () => {
  it('sleepUntil arms no timer beyond the limit and does not spin, for delays from 0 to 10^12 ms', async () => {
    await fc.assert(
      fc.asyncProperty(DELAYS, async (delay) => {
        const armed = await timersArmedBy(async () => {
          const stop = new AbortController();
          const slept = sleepUntil(now() + delay, stop.signal);
          await pause(WATCH_MS);
          stop.abort();
          await slept;
        });
        expectNoOverflowNorSpin(armed);
      }),
      { numRuns: 40 },
    );
  });

  it('a wait beyond the limit still ends when it is due, not before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let woke = false;
    void sleepUntil(now() + 2.5 * MAX_TIMER_MS).then(() => {
      woke = true;
    });
    await vi.advanceTimersByTimeAsync(2 * MAX_TIMER_MS);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(0.5 * MAX_TIMER_MS + 1);
    expect(woke).toBe(true);
  });

  it('the gate waits out a pause of any length in steps, and refuses one past its close at once', async () => {
    await fc.assert(
      fc.asyncProperty(DELAYS, fc.boolean(), async (delay, closed) => {
        const gate = new Gate(
          new Pacer({ windows: [{ name: 'minute', limit: 60, seconds: 60 }], enforce: true }),
        );
        const t = now();
        gate.pacer.pause(t + delay, t);
        if (closed) gate.closesAt = t + 1000;
        const stop = new AbortController();
        let outcome: unknown;
        const armed = await timersArmedBy(async () => {
          const admitted = gate.acquire(stop.signal).then(
            () => 'admitted',
            (error: unknown) => error,
          );
          await pause(WATCH_MS);
          stop.abort();
          outcome = await admitted;
        });
        expectNoOverflowNorSpin(armed);
        if (delay <= WATCH_MS / 2) expect(outcome).toBe('admitted');
        else if (closed && delay > 1000 + WATCH_MS) expect(outcome).toBeInstanceOf(HeldPastEndError);
        else if (delay > 2 * WATCH_MS) expect(outcome).toBeInstanceOf(AbortedError);
      }),
      { numRuns: 40 },
    );
  });

  it('the client, told by a 429 to wait up to 10^12 ms (Retry-After or Reset), never arms a longer timer', async () => {
    const spec = await loadSpec();
    await fc.assert(
      fc.asyncProperty(DELAYS, fc.constantFrom('retry-after', 'reset'), async (delay, header) => {
        const seconds = Math.ceil(delay / 1000);
        const target = await hostileTarget({
          status: 429,
          headers:
            header === 'retry-after'
              ? { 'retry-after': String(seconds) }
              : {
                  'x-ratelimit-limit': '60',
                  'x-ratelimit-remaining': '0',
                  'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + seconds),
                },
        });
        const client = new ApiClient({
          baseUrl: target.url,
          apiKey: 'k',
          keyLabel: 'free',
          operations: spec.operations,
          windows: [{ name: 'minute', limit: 60, seconds: 60 }],
          sink: { record: () => undefined },
        });
        try {
          const armed = await timersArmedBy(async () => {
            const call = client.call('listPets');
            await pause(WATCH_MS * 2);
            client.interrupt();
            await call.catch(() => undefined);
          });
          // undici arms timers of its own for the request: those count too, and stay within the limit.
          for (const d of armed) expect(d).toBeLessThanOrEqual(MAX_TIMER_MS);
          expect(armed.length).toBeLessThan(WATCH_MS);
        } finally {
          await client.close();
          await target.close();
        }
      }),
      { numRuns: 25 },
    );
  });
});
