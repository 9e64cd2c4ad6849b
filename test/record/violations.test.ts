import { beforeAll, describe, expect, it } from 'vitest';
import { formatHttpDate } from '../../src/api/http-date.ts';
import type { Operation } from '../../src/api/operations.ts';
import { ViolationCounter } from '../../src/record/violations.ts';
import { errorBody, makeAttempt, okHeaders, operation, T0 } from '../helpers/unit-attempt.ts';

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

/** A 429 received at `at` with Retry-After `retryAfter`. */
const limited = (at: number, retryAfter: string | undefined, keyLabel = 'free') =>
  makeAttempt(listPets, {
    keyLabel,
    status: 429,
    sentAt: at - 5,
    receivedAt: at,
    json: errorBody(429, 'rate_limited'),
    headers: { ...okHeaders(at), 'retry-after': retryAfter },
  });

const sentAt = (at: number, keyLabel = 'free') =>
  makeAttempt(listPets, { keyLabel, sentAt: at, receivedAt: at + 5 });

describe('ViolationCounter', () => {
  it("counts a send inside a 429's Retry-After window, not one before it or after it", () => {
    const v = new ViolationCounter();
    v.observe(limited(T0, '2'));
    // In flight when the 429 arrived: sent before the window opened.
    v.observe(sentAt(T0 - 1));
    expect(v.count).toBe(0);
    v.observe(sentAt(T0 + 1500));
    expect(v.count).toBe(1);
    expect(v.samples).toEqual([{ operation: 'listPets', sentAt: T0 + 1500, pauseUntil: T0 + 2000 }]);
    // The window is [receivedAt, receivedAt + Retry-After).
    v.observe(sentAt(T0));
    expect(v.count).toBe(2);
    v.observe(sentAt(T0 + 2000));
    v.observe(sentAt(T0 + 5000));
    expect(v.count).toBe(2);
  });

  it('keeps windows per key label', () => {
    const v = new ViolationCounter();
    v.observe(limited(T0, '10', 'free'));
    v.observe(sentAt(T0 + 100, 'pro'));
    expect(v.count).toBe(0);
    v.observe(sentAt(T0 + 100, 'free'));
    expect(v.count).toBe(1);
  });

  it('reads Retry-After as an HTTP-date too', () => {
    const v = new ViolationCounter();
    // T0 is a whole second, so the date form is exact: the window lasts 3 s.
    v.observe(limited(T0, formatHttpDate(new Date(T0 + 3000))));
    v.observe(sentAt(T0 + 2999));
    v.observe(sentAt(T0 + 3000));
    expect(v.count).toBe(1);
  });

  it('opens no window for a 429 without a usable Retry-After, or for a status no limiter refuses with', () => {
    const v = new ViolationCounter();
    v.observe(limited(T0, undefined));
    v.observe(limited(T0 + 10, 'soon'));
    v.observe(
      makeAttempt(listPets, {
        status: 500,
        sentAt: T0,
        receivedAt: T0 + 20,
        headers: { 'retry-after': '60' },
      }),
    );
    v.observe(sentAt(T0 + 100));
    expect(v.count).toBe(0);
  });

  it("opens Retry-After's window for every refusal of the limiter: a 503 or a 403 that carries it", () => {
    for (const status of [503, 403]) {
      const v = new ViolationCounter();
      v.observe(
        makeAttempt(listPets, {
          status,
          sentAt: T0,
          receivedAt: T0 + 20,
          headers: { 'retry-after': '60' },
        }),
      );
      v.observe(sentAt(T0 + 100));
      expect(v.count, String(status)).toBe(1);
    }
  });

  it("opens the client's own pause for a 429 that told no wait (a headerless limiter)", () => {
    const v = new ViolationCounter();
    v.observe({ ...limited(T0, undefined), pauseUntil: T0 + 700 });
    v.observe(sentAt(T0 + 699));
    v.observe(sentAt(T0 + 700));
    expect(v.count).toBe(1);
    // Retry-After, when there is one, is the server's word and wins over the client's pause.
    const told = new ViolationCounter();
    told.observe({ ...limited(T0, '2'), pauseUntil: T0 + 500 });
    told.observe(sentAt(T0 + 1500));
    expect(told.count).toBe(1);
  });

  it('counts a retried 429 sent inside the window, and the window of that 429 too', () => {
    const v = new ViolationCounter();
    v.observe(limited(T0, '1'));
    // A hurried retry, itself answered 429 with a new window.
    v.observe(limited(T0 + 600, '1'));
    expect(v.count).toBe(1);
    v.observe(sentAt(T0 + 1200));
    expect(v.count).toBe(2);
  });

  it('keeps at most five samples but counts every violation', () => {
    const v = new ViolationCounter();
    v.observe(limited(T0, '60'));
    for (let i = 1; i <= 9; i++) v.observe(sentAt(T0 + i * 100));
    expect(v.count).toBe(9);
    expect(v.samples).toHaveLength(5);
    expect(v.samples.map((s) => s.sentAt)).toEqual([1, 2, 3, 4, 5].map((i) => T0 + i * 100));
  });
});
