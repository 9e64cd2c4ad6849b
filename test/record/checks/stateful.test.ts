import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import type { RateWindow } from '../../../src/api/plans.ts';
import type { AttemptRecord } from '../../../src/record/attempt.ts';
import { type Check, type CheckOutcome, SKIP } from '../../../src/record/checks/check.ts';
import { only429WhenSpentCheck } from '../../../src/record/checks/only-429-when-spent.ts';
import { retrySucceedsCheck } from '../../../src/record/checks/retry-succeeds.ts';
import {
  describesClosestCheck,
  remainingNeverRisesCheck,
  resetStableCheck,
} from '../../../src/record/checks/window-checks.ts';
import {
  errorBody,
  FREE_WINDOWS,
  makeAttempt,
  makeContext,
  okHeaders,
  operation,
  T0,
} from '../../helpers/unit-attempt.ts';

let listPets: Operation;
let getPetById: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
  getPetById = await operation('getPetById');
});

/** Reset (Unix s) of the minute window the tests use: 30 s after T0. */
const MINUTE_RESET = T0 / 1000 + 30;
/** Reset of the day window. */
const DAY_RESET = T0 / 1000 + 50_000;

interface Shown {
  /** ms after T0 */
  sent: number;
  received: number;
  limit?: number;
  remaining: number;
  reset?: number;
  status?: number;
  attempt?: number;
  retried?: boolean;
  retryAfter?: string;
  op?: Operation;
}

function response(s: Shown): AttemptRecord {
  const status = s.status ?? 200;
  const receivedAt = T0 + s.received;
  return makeAttempt(s.op ?? listPets, {
    sentAt: T0 + s.sent,
    receivedAt,
    status,
    attempt: s.attempt ?? 1,
    retried: s.retried ?? false,
    json: status === 429 ? errorBody(429, 'rate_limited') : [],
    headers: {
      ...okHeaders(receivedAt),
      'x-ratelimit-limit': String(s.limit ?? 60),
      'x-ratelimit-remaining': String(s.remaining),
      'x-ratelimit-reset': String(s.reset ?? MINUTE_RESET),
      ...(s.retryAfter === undefined ? {} : { 'retry-after': s.retryAfter }),
    },
  });
}

/** Feeds the responses in order (as the recorder does); the outcome of each, then the deferred verdicts. */
function run(check: Check, attempts: AttemptRecord[], windows: RateWindow[] = FREE_WINDOWS) {
  const outcomes: CheckOutcome[] = [];
  for (const a of attempts) {
    check.observe?.(a);
    outcomes.push(a.status === 0 ? SKIP : check.evaluate(makeContext(a, windows)));
  }
  const settled = check.settle?.(Number.POSITIVE_INFINITY, true) ?? [];
  return { outcomes, settled: settled.map((s) => [attempts.indexOf(s.attempt), s.outcome] as const) };
}

describe('ratelimit-remaining-never-rises', () => {
  it('passes when a later request sees as much or less remaining', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 20, received: 30, remaining: 49 }),
      response({ sent: 40, received: 50, remaining: 49 }),
    ]);
    expect(outcomes).toEqual([SKIP, undefined, undefined]);
  });

  it('fails when a request sent after a response was received sees more remaining in that window', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 20, received: 30, remaining: 52 }),
    ]);
    expect(outcomes[1]).toBe(
      `Remaining 52 > 50 shown earlier in the same window (Limit 60, Reset ${MINUTE_RESET})`,
    );
  });

  it('leaves a bucket or a sliding log alone when the limiter is given: their Remaining rises by design', () => {
    const rising = [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 20, received: 30, remaining: 52 }),
    ];
    for (const limiter of ['token-bucket', 'gcra', 'sliding-window'] as const)
      expect(run(remainingNeverRisesCheck(undefined, limiter), rising).outcomes).toEqual([SKIP, SKIP]);
    expect(run(remainingNeverRisesCheck(undefined, 'fixed-window'), rising).outcomes[1]).toMatch(
      /^Remaining 52 > 50/,
    );
  });

  it('compares with the lowest of all the responses received before the send', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 5, received: 15, remaining: 48 }),
      response({ sent: 16, received: 40, remaining: 49 }),
    ]);
    expect(outcomes[2]).toMatch(/^Remaining 49 > 48/);
  });

  it('over a long window keeps judging against the lowest Remaining, old steps folded into one', () => {
    // A day window of a million: 20 000 responses a second apart (the horizon is 2 s here), each
    // one lower; then one that rises, sent after the last was received. The folded log still knows.
    const check = remainingNeverRisesCheck(2000);
    const day = { limit: 1_000_000, reset: T0 / 1000 + 80_000 };
    const steps = Array.from({ length: 20_000 }, (_, i) =>
      response({ sent: i * 1000, received: i * 1000 + 5, remaining: 999_999 - i, ...day }),
    );
    const rising = response({ sent: 20_000_000, received: 20_000_010, remaining: 999_999 - 19_990, ...day });
    const { outcomes } = run(check, [...steps, rising]);
    expect(outcomes.slice(1, -1).every((o) => o === undefined)).toBe(true);
    expect(outcomes.at(-1)).toMatch(/^Remaining 980009 > 980000 shown earlier/);
  });

  it('tolerates reordering in flight: requests sent before the other was received are not compared', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      response({ sent: 0, received: 30, remaining: 48 }),
      response({ sent: 10, received: 40, remaining: 49 }),
    ]);
    expect(outcomes).toEqual([SKIP, SKIP]);
  });

  it('does not compare across windows (another Limit or Reset), nor within the last second before Reset', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      response({ sent: 0, received: 10, remaining: 10 }),
      response({ sent: 20, received: 30, remaining: 59, reset: MINUTE_RESET + 60 }),
      response({ sent: 40, received: 50, limit: 1000, remaining: 900, reset: DAY_RESET }),
      // A window whose Reset is within a second: it may have reset already.
      response({ sent: 60, received: 70, remaining: 5, reset: T0 / 1000 + 1 }),
      response({ sent: 80, received: 90, remaining: 59, reset: T0 / 1000 + 1 }),
    ]);
    expect(outcomes).toEqual([SKIP, SKIP, SKIP, SKIP, SKIP]);
  });
});

describe('ratelimit-reset-stable', () => {
  it('passes for the same Reset, a later one, or one a second earlier (rounding)', () => {
    const { outcomes } = run(resetStableCheck(), [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 20, received: 30, remaining: 49 }),
      response({ sent: 40, received: 50, remaining: 48, reset: MINUTE_RESET - 1 }),
      response({ sent: 60, received: 70, remaining: 47, reset: MINUTE_RESET + 5 }),
    ]);
    expect(outcomes).toEqual([SKIP, undefined, undefined, undefined]);
  });

  it('fails when Reset moves earlier within the window', () => {
    const { outcomes } = run(resetStableCheck(), [
      response({ sent: 0, received: 10, remaining: 50 }),
      response({ sent: 20, received: 30, remaining: 49, reset: MINUTE_RESET - 3 }),
    ]);
    expect(outcomes[1]).toBe(
      `Reset ${MINUTE_RESET - 3} is 3 s earlier than the Reset ${MINUTE_RESET} shown before this request was sent (Limit 60)`,
    );
  });

  it('skips concurrent responses, other Limits, and windows whose Reset has come', () => {
    const { outcomes } = run(resetStableCheck(), [
      response({ sent: 0, received: 30, remaining: 50 }),
      response({ sent: 10, received: 40, remaining: 49, reset: MINUTE_RESET - 10 }),
      response({ sent: 50, received: 60, limit: 1000, remaining: 900, reset: MINUTE_RESET - 20 }),
      response({ sent: 70, received: 80, remaining: 40, reset: T0 / 1000 + 1 }),
      // Sent after the 1 s window above closed: its later, lower Reset is a new window.
      response({ sent: 1500, received: 1510, remaining: 59, reset: T0 / 1000 + 2 }),
    ]);
    expect(outcomes[1]).toBe(SKIP);
    expect(outcomes[2]).toBe(SKIP);
    expect(outcomes[4]).toMatch(/earlier than the Reset/);
    // ... but that one compares with the minute windows still open, whose Reset is later.
    const separate = run(resetStableCheck(), [
      response({ sent: 70, received: 80, remaining: 40, reset: T0 / 1000 + 1 }),
      response({ sent: 1500, received: 1510, remaining: 59, reset: T0 / 1000 + 2 }),
    ]);
    expect(separate.outcomes).toEqual([SKIP, SKIP]);
  });
});

describe('ratelimit-describes-closest', () => {
  it("fails when Remaining exceeds another window's whole limit", () => {
    const { outcomes } = run(describesClosestCheck(), [
      response({ sent: 0, received: 10, limit: 1000, remaining: 999, reset: DAY_RESET }),
    ]);
    expect(outcomes[0]).toBe(
      "Remaining 999 (Limit 1000) exceeds the minute window's whole limit 60: that window is closer to exhaustion",
    );
  });

  it('passes when the described window has no more left than the other could', () => {
    const { outcomes } = run(describesClosestCheck(), [
      response({ sent: 0, received: 10, limit: 1000, remaining: 40, reset: DAY_RESET }),
      response({ sent: 20, received: 30, remaining: 39 }),
    ]);
    expect(outcomes).toEqual([undefined, undefined]);
  });

  it('fails when another window still open was shown with fewer left', () => {
    const { outcomes } = run(describesClosestCheck(), [
      response({ sent: 0, received: 10, limit: 1000, remaining: 30, reset: DAY_RESET }),
      response({ sent: 20, received: 30, remaining: 45 }),
    ]);
    expect(outcomes[1]).toBe(
      `Remaining 45 (Limit 60) exceeds the 30 left in the Limit 1000 window (Reset ${DAY_RESET}) shown before this request was sent`,
    );
  });

  it('skips a plan of one window, and does not compare concurrent responses', () => {
    const minute: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 }];
    expect(
      run(describesClosestCheck(), [response({ sent: 0, received: 10, remaining: 59 })], minute).outcomes,
    ).toEqual([SKIP]);
    const { outcomes } = run(describesClosestCheck(), [
      response({ sent: 0, received: 30, limit: 1000, remaining: 30, reset: DAY_RESET }),
      response({ sent: 20, received: 40, remaining: 45 }),
    ]);
    expect(outcomes).toEqual([undefined, undefined]);
  });
});

describe('ratelimit-429-only-when-spent', () => {
  const limited = (s: Omit<Shown, 'remaining' | 'status'> & { remaining?: number }) =>
    response({ retryAfter: '29', ...s, remaining: s.remaining ?? 0, status: 429 });

  it('fails at once for a 429 that says quota remains', () => {
    expect(run(only429WhenSpentCheck(), [limited({ sent: 0, received: 10, remaining: 3 })]).outcomes).toEqual(
      ['429 with X-RateLimit-Remaining 3'],
    );
  });

  it('fails a 429 when an earlier response showed more left than the requests in between', () => {
    const { outcomes, settled } = run(only429WhenSpentCheck(), [
      response({ sent: 0, received: 10, remaining: 2 }),
      response({ sent: 12, received: 20, remaining: 1 }),
      limited({ sent: 25, received: 30 }),
    ]);
    expect(outcomes).toEqual([SKIP, SKIP, SKIP]);
    expect(settled).toEqual([
      [
        2,
        `429 while the quota remained: 1 left 5 ms before this request was sent (Limit 60, Reset ${MINUTE_RESET}), and at most 0 other requests answered in between`,
      ],
    ]);
  });

  it('passes when enough requests were in flight to spend the quota, even those answered after the 429', () => {
    const { settled } = run(only429WhenSpentCheck(), [
      response({ sent: 0, received: 10, remaining: 2 }),
      limited({ sent: 20, received: 30 }),
      // Sent before the 429 was received, answered after it: they may have taken the last two.
      response({ sent: 15, received: 40, remaining: 1 }),
      { ...response({ sent: 16, received: 45, remaining: 0 }), status: 0, headers: undefined },
    ]);
    expect(settled).toEqual([[1, undefined]]);
  });

  it('waits for the requests in flight before judging', () => {
    const check = only429WhenSpentCheck(5000);
    const a = response({ sent: 0, received: 10, remaining: 5 });
    const b = limited({ sent: 20, received: 30 });
    for (const x of [a, b]) {
      check.observe?.(x);
      check.evaluate(makeContext(x));
    }
    expect(check.settle?.(T0 + 1000, false)).toEqual([]);
    expect(check.settle?.(T0 + 5030, false)).toEqual([
      { attempt: b, outcome: expect.stringMatching(/^429 while/) },
    ]);
    expect(check.settle?.(T0 + 10_000, true)).toEqual([]);
  });

  it('passes a 429 with nothing to compare: no earlier response in its window, or a Reset of another window', () => {
    const { outcomes, settled } = run(only429WhenSpentCheck(), [
      limited({ sent: 0, received: 10 }),
      response({ sent: 1000, received: 1010, remaining: 40 }),
      // A ban: its Reset (and Retry-After) are far later than the window's.
      limited({ sent: 1100, received: 1110, reset: MINUTE_RESET + 600, retryAfter: '629' }),
    ]);
    expect(outcomes).toEqual([undefined, SKIP, undefined]);
    expect(settled).toEqual([]);
  });
});

describe('retry-after-retry-succeeds', () => {
  const first429 = () =>
    response({
      sent: 0,
      received: 100,
      remaining: 0,
      status: 429,
      retried: true,
      retryAfter: '1',
      op: getPetById,
    });

  it('passes a retry sent after Retry-After that is admitted', () => {
    const { outcomes } = run(retrySucceedsCheck(), [
      first429(),
      response({ sent: 1110, received: 1120, remaining: 59, attempt: 2, op: getPetById }),
    ]);
    expect(outcomes).toEqual([SKIP, undefined]);
  });

  it('fails a retry refused again with no other request in between', () => {
    const { outcomes, settled } = run(retrySucceedsCheck(), [
      first429(),
      response({
        sent: 1110,
        received: 1120,
        remaining: 0,
        status: 429,
        attempt: 2,
        retryAfter: '1',
        op: getPetById,
      }),
    ]);
    expect(outcomes).toEqual([SKIP, SKIP]);
    expect(settled).toEqual([
      [
        1,
        'the retry sent 1.01 s after a 429 (Retry-After 1) was refused again, with no other request in between',
      ],
    ]);
  });

  it('gives no verdict when another request may have taken the quota that came back', () => {
    const { settled } = run(retrySucceedsCheck(), [
      first429(),
      response({ sent: 1105, received: 1115, remaining: 0 }),
      response({
        sent: 1110,
        received: 1120,
        remaining: 0,
        status: 429,
        attempt: 2,
        retryAfter: '1',
        op: getPetById,
      }),
    ]);
    expect(settled).toEqual([]);
  });

  it('skips a retry sent before Retry-After elapsed, and a retry after a 5xx', () => {
    const early = run(retrySucceedsCheck(), [
      first429(),
      response({ sent: 500, received: 510, remaining: 0, status: 429, attempt: 2, op: getPetById }),
    ]);
    expect(early.outcomes).toEqual([SKIP, SKIP]);
    expect(early.settled).toEqual([]);
    const after500 = run(retrySucceedsCheck(), [
      { ...response({ sent: 0, received: 100, remaining: 50, retried: true, op: getPetById }), status: 500 },
      response({ sent: 1110, received: 1120, remaining: 0, status: 429, attempt: 2, op: getPetById }),
    ]);
    expect(after500.outcomes).toEqual([SKIP, SKIP]);
    expect(after500.settled).toEqual([]);
  });
});
