import type { IncomingHttpHeaders } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import {
  DIALECTS,
  type Dialect,
  type RateLimitView,
  writeRateLimit,
} from '../../../src/api/rate-limit-dialect.ts';
import { CHECKS, catalogue } from '../../../src/record/checks/catalogue.ts';
import { type Check, type CheckOutcome, SKIP } from '../../../src/record/checks/check.ts';
import { CONTRACTS, type Contract } from '../../../src/record/checks/contract.ts';
import { only429WhenSpentCheck } from '../../../src/record/checks/only-429-when-spent.ts';
import { remainingNeverRisesCheck, resetStableCheck } from '../../../src/record/checks/window-checks.ts';
import { errorBody, makeAttempt, makeContext, operation, T0 } from '../../helpers/unit-attempt.ts';

/*
 * The rate-limit checks read the quota in whatever dialect the server spoke: each holds wherever
 * its fields exist, skips where the dialect cannot say them, and only
 * ratelimit-dialect-matches-contract judges which dialect came. The same quota is written in each
 * dialect by the reference server's own writer.
 */

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

const RATE_LIMIT_IDS = [
  'ratelimit-headers-present',
  'ratelimit-dialect-matches-contract',
  'ratelimit-remaining-bounds',
  'ratelimit-limit-matches-plan',
  'ratelimit-reset-in-window',
  'retry-after-matches-reset',
];

/** The free plan's quota as the reference server tells it: 59 of the minute's 60 left, 30 s to go. */
const QUOTA: RateLimitView = {
  dialect: 'none',
  alsoSent: [],
  limit: 60,
  remaining: 59,
  resetSeconds: 30,
  policy: 'minute',
  policies: [
    { name: 'minute', quota: 60, windowSeconds: 60 },
    { name: 'day', quota: 1000, windowSeconds: 86_400 },
  ],
  malformed: [],
};

/** Received 10 ms after T0, a whole second: every dialect carries the reset exactly. */
const AT = T0 + 1000;

function told(dialect: Dialect | 'none', quota: Partial<RateLimitView> = {}, at = AT): IncomingHttpHeaders {
  const fields = dialect === 'none' ? {} : writeRateLimit({ ...QUOTA, ...quota }, dialect, at);
  return { 'content-type': 'application/json', ...fields };
}

function response(
  headers: IncomingHttpHeaders,
  o: { status?: number; sent?: number; received?: number } = {},
) {
  const status = o.status ?? 200;
  return makeAttempt(listPets, {
    sentAt: o.sent ?? AT - 10,
    receivedAt: o.received ?? AT,
    status,
    headers,
    json: status === 429 ? errorBody(429, 'rate_limited') : [],
  });
}

/** The outcome of each rate-limit check of the catalogue under `contract`, by id. */
function judge(contract: Contract, headers: IncomingHttpHeaders, status = 200): Record<string, CheckOutcome> {
  const ctx = makeContext(response(headers, { status }));
  const checks = catalogue(contract).filter((c) => RATE_LIMIT_IDS.includes(c.id));
  return Object.fromEntries(checks.map((c) => [c.id, c.evaluate(ctx)]));
}

const failures = (outcomes: Record<string, CheckOutcome>) =>
  Object.fromEntries(Object.entries(outcomes).filter(([, o]) => typeof o === 'string'));

describe('every dialect judged in its own terms', () => {
  const contractsKeeping = (d: Dialect): Contract[] => [
    d,
    'any',
    ...(d.startsWith('ietf') ? ['ietf' as const] : []),
  ];

  it.each(DIALECTS)('%s: no rate-limit check fails under a contract it keeps', (dialect) => {
    for (const contract of contractsKeeping(dialect)) {
      const ok = judge(contract, told(dialect));
      expect(failures(ok), `${dialect} under ${contract}`).toEqual({});
      expect(ok['ratelimit-dialect-matches-contract']).toBeUndefined();
      expect(ok['ratelimit-headers-present']).toBeUndefined();
      expect(ok['ratelimit-reset-in-window']).toBeUndefined();
      const limited = judge(contract, { ...told(dialect, { remaining: 0 }), 'retry-after': '30' }, 429);
      expect(failures(limited), `429 in ${dialect} under ${contract}`).toEqual({});
      expect(limited['retry-after-matches-reset']).toBeUndefined();
    }
  });

  it.each(DIALECTS.filter((d) => d !== 'seed'))(
    '%s under the seed contract: the dialect check alone fails, in words',
    (dialect) => {
      const outcomes = judge('seed', told(dialect));
      expect(Object.keys(failures(outcomes))).toEqual(['ratelimit-dialect-matches-contract']);
    },
  );

  it.each([
    [
      'seconds-until',
      'X-RateLimit-Reset is seconds until the reset, as @fastify/rate-limit sends; the contract promises a Unix time in seconds',
    ],
    [
      'unix-ms',
      'X-RateLimit-Reset is a Unix time in milliseconds; the contract promises a Unix time in seconds',
    ],
    [
      'ietf-8',
      'the quota is told in RateLimit/RateLimit-Policy (IETF draft 8); the contract promises X-RateLimit-*',
    ],
    [
      'ietf-7',
      'the quota is told in RateLimit as a dictionary (IETF draft 7); the contract promises X-RateLimit-*',
    ],
    [
      'ietf-6',
      'the quota is told in RateLimit-Limit/-Remaining/-Reset (IETF draft 6); the contract promises X-RateLimit-*',
    ],
  ] as const)('%s under the seed contract says what came and what was promised', (dialect, message) => {
    expect(judge('seed', told(dialect))['ratelimit-dialect-matches-contract']).toBe(message);
  });

  it('a seed response under another contract names both sides', () => {
    expect(judge('seconds-until', told('seed'))['ratelimit-dialect-matches-contract']).toBe(
      'X-RateLimit-Reset is a Unix time in seconds; the contract promises seconds until the reset',
    );
    expect(judge('ietf', told('seed'))['ratelimit-dialect-matches-contract']).toBe(
      'the quota is told in X-RateLimit-*, Reset a Unix time in seconds; the contract promises the RateLimit fields of an IETF draft',
    );
    expect(judge('ietf-8', told('ietf-6'))['ratelimit-dialect-matches-contract']).toMatch(
      /^the quota is told in RateLimit-Limit\/-Remaining\/-Reset \(IETF draft 6\); the contract promises RateLimit\/RateLimit-Policy \(IETF draft 8\)$/,
    );
  });
});

describe('a Reset in seconds until the reset (the fault resetAsDelta, @fastify/rate-limit)', () => {
  const delta = () => ({ ...told('seed'), 'x-ratelimit-reset': '30' });

  it('under the seed contract: the dialect check fails in words, and no check quotes a nonsense figure', () => {
    const outcomes = judge('seed', delta());
    expect(failures(outcomes)).toEqual({
      'ratelimit-dialect-matches-contract':
        'X-RateLimit-Reset is seconds until the reset, as @fastify/rate-limit sends; the contract promises a Unix time in seconds',
    });
    // Read as 30 s from the response, it is in the window: not "Reset 30 is 1798761571 s in the past".
    expect(outcomes['ratelimit-reset-in-window']).toBeUndefined();
  });

  it('under the contract seconds-until, or any: every rate-limit check passes', () => {
    for (const contract of ['seconds-until', 'any'] as const) {
      const outcomes = judge(contract, delta());
      expect(failures(outcomes), contract).toEqual({});
      expect(outcomes['ratelimit-dialect-matches-contract'], contract).toBeUndefined();
    }
  });

  it('a delay beyond the longest window still fails reset-in-window, naming the field', () => {
    expect(judge('any', { ...delta(), 'x-ratelimit-reset': '90000' })['ratelimit-reset-in-window']).toBe(
      'Reset in 90000 s (X-RateLimit-Reset) is more than one window (86400 s) ahead',
    );
  });
});

describe('ietf-8', () => {
  it('under the contract ietf every rate-limit check passes; under the seed, only the dialect fails', () => {
    expect(failures(judge('ietf', told('ietf-8')))).toEqual({});
    expect(Object.keys(failures(judge('seed', told('ietf-8'))))).toEqual([
      'ratelimit-dialect-matches-contract',
    ]);
  });

  it('without a policy there is no Limit: the checks that need one skip, headers-present holds (the draft makes it optional)', () => {
    const outcomes = judge('ietf', told('ietf-8', { policies: [] }));
    expect(outcomes['ratelimit-headers-present']).toBeUndefined();
    expect(outcomes['ratelimit-remaining-bounds']).toBe(SKIP);
    expect(outcomes['ratelimit-limit-matches-plan']).toBe(SKIP);
    expect(outcomes['ratelimit-reset-in-window']).toBeUndefined();
  });

  it('fails the figures in its own fields', () => {
    expect(judge('ietf', told('ietf-8', { remaining: 61 }))['ratelimit-remaining-bounds']).toBe(
      'Remaining 61 > Limit 60',
    );
    const unknown = { policies: [{ name: 'minute', quota: 300, windowSeconds: 60 }] };
    expect(judge('ietf', told('ietf-8', unknown))['ratelimit-limit-matches-plan']).toBe(
      'Limit 300 is none of 60, 1000',
    );
    expect(judge('ietf', told('ietf-8', { resetSeconds: 90_000 }))['ratelimit-reset-in-window']).toBe(
      'Reset in 90000 s (RateLimit t) is more than one window (86400 s) ahead',
    );
    const mismatched = { ...told('ietf-8', { remaining: 0 }), 'retry-after': '35' };
    expect(judge('ietf', mismatched, 429)['retry-after-matches-reset']).toBe(
      'Retry-After ends 5.0 s after Reset in 30 s (RateLimit t)',
    );
    // Sooner than the reset is a sliding window's or a bucket's partial return, not a contradiction.
    const sooner = { ...told('ietf-8', { remaining: 0 }), 'retry-after': '5' };
    expect(judge('ietf', sooner, 429)['retry-after-matches-reset']).toBeUndefined();
  });

  it('sent beside the seed fields keeps the seed contract (express-rate-limit sends both)', () => {
    const both = { ...told('seed'), ...told('ietf-8') };
    expect(failures(judge('seed', both))).toEqual({});
  });
});

describe('fields missing, in each dialect', () => {
  it('names what the dialect lacks', () => {
    const six = told('ietf-6');
    delete six['ratelimit-reset'];
    expect(judge('ietf', six)['ratelimit-headers-present']).toBe('missing or malformed: ratelimit-reset');
    expect(judge('ietf', { ...told('none'), ratelimit: 'remaining=3' })['ratelimit-headers-present']).toBe(
      'missing or malformed: RateLimit limit, RateLimit reset',
    );
    expect(
      judge('seed', { ...told('seed'), 'x-ratelimit-limit': undefined })['ratelimit-headers-present'],
    ).toBe('missing or not an integer: x-ratelimit-limit');
  });

  it('no rate-limit field at all fails headers-present once, naming the promise; the dialect check skips', () => {
    const seed = judge('seed', told('none'));
    expect(failures(seed)).toEqual({
      'ratelimit-headers-present': 'no rate-limit fields at all; the contract promises X-RateLimit-*',
    });
    expect(seed['ratelimit-dialect-matches-contract']).toBe(SKIP);
    expect(judge('ietf', told('none'))['ratelimit-headers-present']).toBe(
      'no rate-limit fields at all; the contract promises the RateLimit fields of an IETF draft',
    );
  });

  it('X-RateLimit-* without a Reset cannot be told apart: the dialect check skips under their contracts', () => {
    const noReset = { ...told('seconds-until'), 'x-ratelimit-reset': undefined };
    expect(judge('seconds-until', noReset)['ratelimit-dialect-matches-contract']).toBe(SKIP);
    expect(judge('seed', noReset)['ratelimit-dialect-matches-contract']).toBeUndefined();
    expect(judge('ietf', noReset)['ratelimit-dialect-matches-contract']).toBe(
      'the quota is told in X-RateLimit-* (without a Reset); the contract promises the RateLimit fields of an IETF draft',
    );
  });
});

describe('the catalogue per contract', () => {
  it('names the contract in the dialect check, and defaults to the seed', () => {
    const dialectCheck = (checks: readonly Check[]) =>
      checks.find((c) => c.id === 'ratelimit-dialect-matches-contract') as Check;
    expect(dialectCheck(CHECKS).rule).toMatch(/--contract seed: X-RateLimit-\*/);
    expect(dialectCheck(CHECKS).source).toMatch(/^seed: Limits/);
    expect(dialectCheck(catalogue('ietf')).rule).toMatch(
      /--contract ietf: the RateLimit fields of an IETF draft/,
    );
    for (const contract of CONTRACTS)
      expect(catalogue(contract).map((c) => c.id)).toEqual(CHECKS.map((c) => c.id));
  });
});

/** A server's delay for a reset at `resetAt` (ms), as the reference server and most limiters round it: up. */
const delayAt = (resetAt: number, serverAt: number) => Math.ceil((resetAt - serverAt) / 1000);

describe('the stateful checks on a Reset told as a delay', () => {
  /** The same window (resetting 30 s after T0) told in ietf-8 at each response's own moment. */
  function delayed(
    sent: number,
    received: number,
    remaining: number,
    o: { status?: number; resetAt?: number } = {},
  ) {
    const resetAt = o.resetAt ?? T0 + 30_000;
    const headers = told('ietf-8', { remaining, resetSeconds: delayAt(resetAt, T0 + sent) }, T0 + received);
    if (o.status === 429) headers['retry-after'] = String(delayAt(resetAt, T0 + sent));
    return response(headers, { status: o.status, sent: T0 + sent, received: T0 + received });
  }

  function run(check: Check, attempts: ReturnType<typeof response>[]) {
    const outcomes = attempts.map((a) => {
      check.observe?.(a);
      return check.evaluate(makeContext(a));
    });
    const settled = (check.settle?.(Number.POSITIVE_INFINITY, true) ?? []).map((s) => s.outcome);
    return { outcomes, settled };
  }

  it('Remaining falling over responses whose delays round differently: compared, and passing', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [
      delayed(0, 400, 50),
      delayed(500, 900, 49),
      delayed(1000, 1700, 48),
      delayed(1800, 2050, 47),
    ]);
    expect(outcomes.filter((o) => o === undefined).length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o === undefined || o === SKIP)).toBe(true);
  });

  it('Remaining rising within the window fails, naming the reset and the field it came in', () => {
    const { outcomes } = run(remainingNeverRisesCheck(), [delayed(0, 100, 50), delayed(200, 300, 52)]);
    expect(outcomes[1]).toBe(
      'Remaining 52 > 50 shown earlier in the same window (Limit 60, reset at 2027-01-01T00:00:30Z (RateLimit t))',
    );
  });

  it('two windows a rounding apart are not compared: the next window starts full', () => {
    // 1 s windows. A's window ends at +10 s; its answer took 0.7 s, so receive time plus delay points
    // to +11.6 s, the second B's window (ending at +11 s) rounds to as well.
    const a = delayed(9_900, 10_600, 0, { resetAt: T0 + 10_000 });
    const b = delayed(10_650, 10_750, 4, { resetAt: T0 + 11_000 });
    expect(makeContext(a).quota.reset).toBe(makeContext(b).quota.reset);
    expect(run(remainingNeverRisesCheck(), [a, b]).outcomes).toEqual([SKIP, SKIP]);
  });

  it("a slow answer's delay points later than a quick one's: not a Reset moving earlier", () => {
    // Both name the reset at +30 s; the first, answered after 2 s, reads as +32 s, the next as +30.
    const { outcomes } = run(resetStableCheck(), [delayed(0, 2_000, 50), delayed(2_100, 2_110, 49)]);
    expect(outcomes).toEqual([SKIP, undefined]);
  });

  it('Reset moving earlier by more than its rounding fails', () => {
    const { outcomes } = run(resetStableCheck(), [
      delayed(0, 100, 50),
      delayed(200, 300, 49, { resetAt: T0 + 25_000 }),
    ]);
    expect(outcomes[1]).toBe(
      'reset at 2027-01-01T00:00:25Z (RateLimit t) is 5 s earlier than the reset at 2027-01-01T00:00:30Z (RateLimit t) shown before this request was sent (Limit 60)',
    );
  });

  it('a Reset in Unix milliseconds that moves within its second still names one window', () => {
    // As a server deriving it from a delay of whole seconds sends it: 30 s after each response's moment.
    const ms = (sent: number, received: number, remaining: number) =>
      response(told('unix-ms', { remaining, resetSeconds: delayAt(T0 + 30_000, T0 + sent) }, T0 + sent), {
        sent: T0 + sent,
        received: T0 + received,
      });
    const { outcomes } = run(remainingNeverRisesCheck(), [ms(0, 300, 50), ms(400, 700, 52)]);
    expect(outcomes[1]).toBe(
      'Remaining 52 > 50 shown earlier in the same window (Limit 60, reset at 2027-01-01T00:00:30Z (X-RateLimit-Reset))',
    );
  });

  it('a 429 while the quota remained is judged, and named in the dialect', () => {
    expect(run(only429WhenSpentCheck(), [delayed(0, 10, 3, { status: 429 })]).outcomes).toEqual([
      '429 with RateLimit r 3',
    ]);
    const { settled } = run(only429WhenSpentCheck(), [
      delayed(0, 10, 2),
      delayed(20, 30, 0, { status: 429 }),
    ]);
    expect(settled).toEqual([
      expect.stringMatching(
        /^429 while the quota remained: 2 left .*reset at 2027-01-01T00:00:30Z \(RateLimit t\)/,
      ),
    ]);
  });
});
