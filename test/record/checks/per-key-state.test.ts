import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import { seededRandom } from '../../../src/api/random.ts';
import type { AttemptRecord } from '../../../src/record/attempt.ts';
import { AttemptHistory } from '../../../src/record/checks/attempt-history.ts';
import { type Check, SKIP } from '../../../src/record/checks/check.ts';
import { only429WhenSpentCheck } from '../../../src/record/checks/only-429-when-spent.ts';
import { RemainingLog } from '../../../src/record/checks/remaining-log.ts';
import { retrySucceedsCheck } from '../../../src/record/checks/retry-succeeds.ts';
import { describesClosestCheck, remainingNeverRisesCheck } from '../../../src/record/checks/window-checks.ts';
import { errorBody, makeAttempt, makeContext, okHeaders, operation, T0 } from '../../helpers/unit-attempt.ts';

/*
 * The stateful checks keep little per key (10,000 tenants multiply it): the history forgets what no
 * check can ask about any more, witnesses no 429 can pick are dropped. Neither may change a verdict:
 * held here against a history that forgets nothing, over long made-up runs of several keys with
 * requests in flight, broken quotas, 429s and retries.
 */

/** A history that never forgets: the checks' promises are ignored. */
class KeepAll extends AttemptHistory {
  override askFrom(): void {}
}

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

/**
 * `count` attempts over `keys` keys, in receive order: windows of 10 s, limit 20, requests of a key
 * overlapping, some answers wrong (a 429 with quota left, more shown than there is), and the retry
 * of a 429 sent once its Retry-After has passed (or not quite).
 */
function made(seed: number, count: number, keys: number): AttemptRecord[] {
  const random = seededRandom(seed);
  const out: AttemptRecord[] = [];
  const used = new Map<string, number>();
  const retries: { key: string; at: number; attempt: number }[] = [];
  for (let i = 0; i < count; i++) {
    const due = retries.length > 0 && random() < 0.5 ? retries.shift() : undefined;
    const key = due?.key ?? `free#${1 + Math.floor(random() * keys)}`;
    const sentAt = Math.max(T0 + i * 37 + random() * 30, due?.at ?? 0);
    const receivedAt = sentAt + 5 + random() * (random() < 0.1 ? 3000 : 200);
    const window = Math.floor((receivedAt - T0) / 10_000);
    const reset = Math.ceil(T0 / 1000) + (window + 1) * 10;
    const id = `${key}/${window}`;
    const n = (used.get(id) ?? 0) + 1;
    used.set(id, n);
    // A limiter that now and then says 429 with quota left, or shows more than it has.
    const limited = n > 20 || random() < 0.03;
    const remaining = limited ? 0 : Math.max(0, 20 - n + (random() < 0.05 ? 5 : 0));
    const attempt = due?.attempt ?? 1;
    const retried = limited && attempt < 3 && random() < 0.7;
    const retryAfter = Math.floor(random() * 3);
    if (retried)
      retries.push({
        key,
        at: receivedAt + retryAfter * 1000 - (random() < 0.1 ? 300 : 0),
        attempt: attempt + 1,
      });
    out.push(
      makeAttempt(listPets, {
        keyLabel: key,
        sentAt,
        receivedAt,
        status: limited ? 429 : 200,
        attempt,
        retried,
        json: limited ? errorBody(429, 'rate_limited') : [],
        headers: {
          ...okHeaders(receivedAt),
          'x-ratelimit-limit': '20',
          'x-ratelimit-remaining': String(remaining),
          'x-ratelimit-reset': String(reset),
          ...(limited ? { 'retry-after': String(retryAfter) } : {}),
        },
      }),
    );
  }
  return out.sort((a, b) => a.receivedAt - b.receivedAt);
}

/** Every verdict, as the recorder gets them: evaluated on arrival, deferred ones settled as time passes. */
function verdicts(checks: Check[], attempts: AttemptRecord[]): string[] {
  const out: string[] = [];
  const label = (a: AttemptRecord) => `${a.keyLabel}@${a.receivedAt.toFixed(3)}`;
  for (const a of attempts) {
    for (const c of checks) c.observe?.(a);
    checks.forEach((c, i) => {
      const outcome = c.evaluate(makeContext(a));
      if (outcome !== SKIP) out.push(`${i} ${label(a)} ${String(outcome ?? 'pass')}`);
    });
    checks.forEach((c, i) => {
      for (const s of c.settle?.(a.receivedAt, false) ?? [])
        out.push(`${i} settled ${label(s.attempt)} ${s.outcome}`);
    });
  }
  checks.forEach((c, i) => {
    for (const s of c.settle?.(Number.POSITIVE_INFINITY, true) ?? [])
      out.push(`${i} final ${label(s.attempt)} ${s.outcome}`);
  });
  return out;
}

describe('per-key state of the stateful checks', () => {
  it('gives every verdict a history that forgets nothing gives', () => {
    let refusedAgain = 0;
    // Few keys (dense traffic, long histories) and many (sparse: retries with nothing in between).
    for (const [seed, keys] of [
      [1, 3],
      [2, 3],
      [3, 40],
      [4, 40],
    ] as const) {
      const attempts = made(seed, 2500, keys);
      const settle = 2000;
      const shared = new AttemptHistory();
      const small = verdicts(
        [only429WhenSpentCheck(settle, shared), retrySucceedsCheck(settle, shared)],
        attempts,
      );
      const all = new KeepAll();
      const full = verdicts([only429WhenSpentCheck(settle, all), retrySucceedsCheck(settle, all)], attempts);
      expect(small).toEqual(full);
      // ... from a history that kept a few seconds of each key, not the whole run.
      const sent = attempts.filter((a) => a.keyLabel === 'free#1').length;
      expect(all.kept('free#1')).toBe(sent);
      expect(shared.kept('free#1')).toBeLessThan(Math.max(40, sent / 4));
      // The runs judge something both ways: passes and failures, of both checks.
      expect(full.some((v) => v.includes('429 while the quota remained'))).toBe(true);
      expect(full.some((v) => v.startsWith('0 ') && v.endsWith(' pass'))).toBe(true);
      expect(full.some((v) => v.startsWith('1 '))).toBe(true);
      refusedAgain += full.filter((v) => v.includes('was refused again')).length;
    }
    expect(refusedAgain).toBeGreaterThan(0);
  });

  it('counts up to the limit after forgetting attempts before every promise', () => {
    const history = new AttemptHistory();
    let floor = Number.NEGATIVE_INFINITY;
    history.askFrom(() => floor);
    const at = (i: number) =>
      makeAttempt(listPets, { keyLabel: 'k', sentAt: T0 + i * 10, receivedAt: T0 + i * 10 + 5 });
    for (let i = 0; i < 16; i++) history.add(at(i));
    expect(history.countBetween('k', T0, T0 + 1000, [], 100, 0)).toBe(16);
    // Received at or before T0 + 155 (the first 16): forgotten at the next 8th attempt.
    floor = T0 + 155;
    for (let i = 16; i < 24; i++) history.add(at(i));
    expect(history.countBetween('k', T0 + 155, T0 + 1000, [], 100, 0)).toBe(8);
    // Asked from before what was forgotten: no count (no verdict), never a wrong one.
    expect(history.countBetween('k', T0, T0 + 1000, [], 100, 0)).toBeUndefined();
    // The same attempt observed by two checks sharing the history is kept once.
    const a = at(24);
    history.add(a);
    history.add(a);
    expect(history.countBetween('k', T0 + 155, T0 + 1000, [], 100, 0)).toBe(9);
    // An excluded attempt is told by its times.
    expect(history.countBetween('k', T0 + 155, T0 + 1000, [a], 100, 0)).toBe(8);
  });

  it('shares one log of Remaining between two checks, the verdicts unchanged', () => {
    const attempts = made(4, 600, 2);
    const log = new RemainingLog(2000);
    const shared = verdicts(
      [remainingNeverRisesCheck(2000, undefined, log), describesClosestCheck(2000, log)],
      attempts,
    );
    const own = verdicts([remainingNeverRisesCheck(2000), describesClosestCheck(2000)], attempts);
    expect(shared).toEqual(own);
    expect(own.some((v) => v.includes('shown earlier in the same window'))).toBe(true);
  });
});
