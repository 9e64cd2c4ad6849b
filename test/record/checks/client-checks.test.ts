import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import type { AttemptRecord } from '../../../src/record/attempt.ts';
import type { AttemptCheck } from '../../../src/record/checks/check.ts';
import {
  backoffCheck,
  clientChecks,
  retryBudgetCheck,
  waitedRetryAfterCheck,
} from '../../../src/record/checks/client-checks.ts';
import { errorBody, makeAttempt, okHeaders, operation, T0 } from '../../helpers/unit-attempt.ts';

/*
 * Our client never breaks these rules (the integration runs show them passing); crafted attempt
 * sequences show that each check can fail.
 */

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

function feed(check: AttemptCheck, attempts: AttemptRecord[]) {
  for (const a of attempts) check.observe(a);
  return check.counts();
}

const ok = (sent: number, over: Partial<AttemptRecord> = {}) =>
  makeAttempt(listPets, { sentAt: T0 + sent, receivedAt: T0 + sent + 10, json: [], ...over });

const limited = (sent: number, retryAfter: string | undefined, over: Partial<AttemptRecord> = {}) =>
  makeAttempt(listPets, {
    sentAt: T0 + sent,
    receivedAt: T0 + sent + 10,
    status: 429,
    json: errorBody(429, 'rate_limited'),
    headers: {
      ...okHeaders(T0 + sent + 10),
      'x-ratelimit-remaining': '0',
      ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
    },
    retried: true,
    ...over,
  });

const failed = (sent: number, attempt: number, status = 500, over: Partial<AttemptRecord> = {}) =>
  makeAttempt(listPets, {
    sentAt: T0 + sent,
    receivedAt: T0 + sent + 10,
    status,
    attempt,
    json: status === 0 ? undefined : errorBody(status),
    headers: status === 0 ? undefined : okHeaders(T0 + sent + 10),
    retried: true,
    ...over,
  });

describe('client checks', () => {
  it('are reported in order with distinct ids, rules and sources', () => {
    const checks = clientChecks();
    expect(checks.map((c) => c.id)).toEqual([
      'client-waited-retry-after',
      'client-backoff-jitter-cap',
      'client-retry-budget',
    ]);
    for (const c of checks) expect(c.rule.length).toBeGreaterThan(20);
  });
});

describe('client-waited-retry-after', () => {
  it('passes requests sent after the pause, and does not count those before any 429', () => {
    const counts = feed(waitedRetryAfterCheck(), [
      ok(0),
      limited(100, '1'),
      ok(1200, { attempt: 2 }),
      ok(1300),
    ]);
    expect(counts).toMatchObject({ passes: 2, failures: 0 });
  });

  it('fails a request sent inside the pause, whichever virtual user sent it', () => {
    const counts = feed(waitedRetryAfterCheck(), [limited(100, '2'), ok(600), ok(2200)]);
    expect(counts).toMatchObject({ passes: 1, failures: 1 });
    expect(counts.samples[0]?.detail).toBe('sent 1510 ms before the Retry-After pause ended');
  });

  it('reads Retry-After as an HTTP-date too', () => {
    const until = new Date(T0 + 5000).toUTCString();
    const counts = feed(waitedRetryAfterCheck(), [limited(100, until), ok(3000)]);
    expect(counts.failures).toBe(1);
  });
});

describe('client-backoff-jitter-cap', () => {
  it('passes retries within the full-jitter ceiling of their attempt', () => {
    const counts = feed(backoffCheck({ baseMs: 100, capMs: 1000 }), [
      failed(0, 1),
      failed(70, 2, 0, { backoffWaitMs: 60 }),
      failed(300, 3, 502, { backoffWaitMs: 190 }),
      ok(700, { attempt: 4, backoffWaitMs: 390 }),
    ]);
    expect(counts).toMatchObject({ passes: 3, failures: 0 });
  });

  it('fails a wait above the ceiling (a backoff that does not start small or has no cap)', () => {
    const counts = feed(backoffCheck({ baseMs: 100, capMs: 1000 }), [
      failed(0, 1),
      ok(5000, { attempt: 2, backoffWaitMs: 4990 }),
    ]);
    expect(counts).toMatchObject({ passes: 0, failures: 1 });
    expect(counts.samples[0]?.detail).toBe('waited 4990 ms before attempt 2, above its ceiling of 100 ms');
    // The cap: attempt 9 may wait up to 1000 ms (+ timer slack), not 2^7 x 100 ms.
    const capped = feed(backoffCheck({ baseMs: 100, capMs: 1000 }), [
      failed(0, 8),
      ok(5000, { attempt: 9, backoffWaitMs: 4990 }),
    ]);
    expect(capped.failures).toBe(1);
  });

  it('fails waits without jitter: ten or more all at their ceiling', () => {
    const deterministic: AttemptRecord[] = [];
    const jittered: AttemptRecord[] = [];
    for (let i = 0; i < 10; i++) {
      deterministic.push(failed(i * 1000, 1), ok(i * 1000 + 120, { attempt: 2, backoffWaitMs: 100 }));
      jittered.push(failed(i * 1000, 1), ok(i * 1000 + 120, { attempt: 2, backoffWaitMs: i * 10 + 3 }));
    }
    const counts = feed(backoffCheck(), deterministic);
    expect(counts).toMatchObject({ passes: 10, failures: 1 });
    expect(counts.samples[0]?.detail).toBe(
      'no jitter: all 10 waits before attempt 2 were at 90% or more of their ceiling',
    );
    expect(feed(backoffCheck(), jittered)).toMatchObject({ passes: 10, failures: 0 });
  });

  it('does not judge retries held by a 429 pause, nor retries after a 429', () => {
    const counts = feed(backoffCheck(), [
      failed(0, 1),
      limited(5, '3', { attempt: 1 }),
      ok(3100, { attempt: 2, backoffWaitMs: 3000 }),
      ok(3200, { attempt: 2, backoffWaitMs: 3000 }),
    ]);
    expect(counts).toMatchObject({ passes: 0, failures: 0 });
  });
});

describe('client-retry-budget', () => {
  const calls = (n: number) => Array.from({ length: n }, (_, i) => ok(i * 10));

  it('passes up to the budget: 10% of the calls, at least 10', () => {
    const retries = Array.from({ length: 10 }, (_, i) => failed(2000 + i * 10, 1, 0));
    expect(feed(retryBudgetCheck(), [...calls(20), ...retries])).toMatchObject({ passes: 10, failures: 0 });
    const more = Array.from({ length: 15 }, (_, i) => failed(2000 + i * 10, 1, 503));
    expect(feed(retryBudgetCheck(), [...calls(135), ...more])).toMatchObject({ passes: 15, failures: 0 });
  });

  it('fails the retries beyond it; 429 retries are not part of it', () => {
    const retries = Array.from({ length: 12 }, (_, i) => failed(2000 + i * 10, 1, 500));
    const counts = feed(retryBudgetCheck(), [...calls(88), ...retries, limited(3000, '1', { attempt: 2 })]);
    expect(counts).toMatchObject({ passes: 10, failures: 2 });
    expect(counts.samples.map((s) => s.detail)).toEqual([
      'retry 11 of at most 10 for 100 calls',
      'retry 12 of at most 10 for 100 calls',
    ]);
  });
});
