import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatHttpDate } from '../../../src/api/http-date.ts';
import type { Operation } from '../../../src/api/operations.ts';
import { allCheckIds, CHECKS, responseChecks } from '../../../src/record/checks/catalogue.ts';
import { type Check, type CheckContext, SKIP } from '../../../src/record/checks/check.ts';
import {
  errorBody,
  FREE_WINDOWS,
  makeAttempt,
  makeContext,
  okHeaders,
  operation,
  T0,
} from '../../helpers/unit-attempt.ts';

const check = (id: string): Check => {
  const c = CHECKS.find((x) => x.id === id);
  if (!c) throw new Error(`no check '${id}'`);
  return c;
};

let listPets: Operation;
let getPetById: Operation;

beforeAll(async () => {
  listPets = await operation('listPets');
  getPetById = await operation('getPetById');
});

/** A 200 of listPets received at T0 + 10 with well-formed headers and extra/overridden ones. */
function ctx(
  headers: Record<string, string | undefined> = {},
  status = 200,
  json: unknown = [],
): CheckContext {
  const at = T0 + 10;
  return makeContext(makeAttempt(listPets, { status, json, headers: { ...okHeaders(at), ...headers } }));
}

describe('check catalogue', () => {
  it('has unique kebab-case ids, each with a rule and a source', () => {
    const ids = CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of CHECKS) {
      expect(c.id).toMatch(/^[a-z0-9-]+$/);
      expect(c.rule.length).toBeGreaterThan(10);
      expect(c.source.length).toBeGreaterThan(3);
    }
    expect(ids).toEqual([
      'ratelimit-headers-present',
      'ratelimit-dialect-matches-contract',
      'ratelimit-remaining-bounds',
      'ratelimit-limit-matches-plan',
      'ratelimit-reset-in-window',
      'refusal-is-429',
      'retry-after-on-429',
      'retry-after-matches-reset',
      'ratelimit-429-not-cacheable',
      'error-body',
      'json-content-type',
      'deprecation-headers',
      'sunset-link',
    ]);
  });

  it('passes every check (or skips it) on a well-formed 200', () => {
    for (const c of CHECKS) expect([undefined, SKIP], c.id).toContain(c.evaluate(ctx()));
  });
});

describe('ratelimit-headers-present', () => {
  const c = () => check('ratelimit-headers-present');
  it('passes with the three headers as integers', () => {
    expect(c().evaluate(ctx())).toBeUndefined();
  });
  it('fails naming each missing or malformed header', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': undefined }))).toBe(
      'missing or not an integer: x-ratelimit-remaining',
    );
    expect(c().evaluate(ctx({ 'x-ratelimit-limit': '1.5', 'x-ratelimit-reset': 'soon' }))).toBe(
      'missing or not an integer: x-ratelimit-limit, x-ratelimit-reset',
    );
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '-1' }))).toMatch(/x-ratelimit-remaining/);
  });
  it('applies to every response, errors included (never skips)', () => {
    expect(c().evaluate(ctx({}, 500, errorBody(500)))).toBeUndefined();
    expect(c().evaluate(ctx({}, 429, errorBody(429)))).toBeUndefined();
  });
});

describe('ratelimit-remaining-bounds', () => {
  const c = () => check('ratelimit-remaining-bounds');
  it('passes with 0 <= Remaining <= Limit', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '0' }))).toBeUndefined();
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '60' }))).toBeUndefined();
  });
  it('fails when Remaining exceeds Limit', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '61' }))).toBe('Remaining 61 > Limit 60');
  });
  it('skips when either header is missing', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': undefined }))).toBe(SKIP);
    expect(c().evaluate(ctx({ 'x-ratelimit-limit': undefined }))).toBe(SKIP);
  });
});

describe('ratelimit-limit-matches-plan', () => {
  const c = () => check('ratelimit-limit-matches-plan');
  it("passes when Limit is one of the plan's limits", () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-limit': '60' }))).toBeUndefined();
    expect(
      c().evaluate(ctx({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999' })),
    ).toBeUndefined();
  });
  it('fails naming the plan limits', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-limit': '300' }))).toBe('Limit 300 is none of 60, 1000');
  });
  it('skips without a Limit or without plan windows', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-limit': undefined }))).toBe(SKIP);
    expect(c().evaluate({ ...ctx(), windows: [] })).toBe(SKIP);
  });
});

describe('ratelimit-reset-in-window', () => {
  const c = () => check('ratelimit-reset-in-window');
  const now = Math.ceil((T0 + 10) / 1000);
  it('passes for a reset between now and now + the longest window', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': String(now) }))).toBeUndefined();
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': String(now + 86_400) }))).toBeUndefined();
  });
  it('fails for a reset in the past', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': String(now - 10) }))).toBe(
      `Reset ${now - 10} is 9 s in the past`,
    );
  });
  it('reads a delta sent instead of a Unix time as the delay it is: the dialect check names it (dialect.test.ts)', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': '30' }))).toBeUndefined();
    expect(check('ratelimit-dialect-matches-contract').evaluate(ctx({ 'x-ratelimit-reset': '30' }))).toBe(
      'X-RateLimit-Reset is seconds until the reset, as @fastify/rate-limit sends; the contract promises a Unix time in seconds',
    );
  });
  it('fails for a reset beyond the longest window', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': String(now + 86_400 + 5) }))).toBe(
      `Reset ${now + 86_400 + 5} is more than one window (86400 s) ahead`,
    );
    // Against minute windows only, a day ahead is too far.
    const minuteOnly = { ...ctx({ 'x-ratelimit-reset': String(now + 3600) }), windows: [FREE_WINDOWS[0]!] };
    expect(c().evaluate(minuteOnly)).toMatch(/more than one window \(60 s\)/);
  });
  it('skips a 429 (a ban resets later than any window), no Reset, or no windows', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': String(now + 600_000) }, 429, errorBody(429)))).toBe(SKIP);
    expect(c().evaluate(ctx({ 'x-ratelimit-reset': undefined }))).toBe(SKIP);
    expect(c().evaluate({ ...ctx(), windows: [] })).toBe(SKIP);
  });
});

describe('refusal-is-429', () => {
  const c = () => check('refusal-is-429');
  it("fails the limiter's refusal in another status, naming it, and passes a 429", () => {
    expect(c().evaluate(ctx({ 'retry-after': '5' }, 429, errorBody(429)))).toBeUndefined();
    expect(c().evaluate(ctx({ 'retry-after': '5' }, 503, errorBody(503)))).toBe(
      "refused with 503, not 429 as the seed's contract says",
    );
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '0' }, 403, errorBody(403)))).toMatch(
      /refused with 403/,
    );
  });
  it('skips what is not a refusal: a bare 503, a bare 403 (authorization), a success', () => {
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '3' }, 503, errorBody(503)))).toBe(SKIP);
    expect(c().evaluate(ctx({ 'x-ratelimit-remaining': '3' }, 403, errorBody(403)))).toBe(SKIP);
    expect(c().evaluate(ctx())).toBe(SKIP);
  });
});

describe('retry-after-on-429', () => {
  const c = () => check('retry-after-on-429');
  const limited = (retryAfter: string | undefined) =>
    ctx({ 'retry-after': retryAfter }, 429, errorBody(429, 'rate_limited'));
  it('passes with delay-seconds or an IMF-fixdate', () => {
    expect(c().evaluate(limited('12'))).toBeUndefined();
    expect(c().evaluate(limited(formatHttpDate(new Date(T0 + 5000))))).toBeUndefined();
  });
  it('fails without Retry-After or with a malformed one', () => {
    expect(c().evaluate(limited(undefined))).toBe('no Retry-After');
    expect(c().evaluate(limited('1.5'))).toBe("Retry-After '1.5' is neither delay-seconds nor an HTTP-date");
    expect(c().evaluate(limited('in a minute'))).toMatch(/neither delay-seconds nor an HTTP-date/);
  });
  it('skips any other status', () => {
    expect(c().evaluate(ctx({ 'retry-after': undefined }))).toBe(SKIP);
    expect(c().evaluate(ctx({}, 503, errorBody(503)))).toBe(SKIP);
  });
});

describe('error-body', () => {
  const c = () => check('error-body');
  it('passes for an Error object whose status is the HTTP status', () => {
    expect(c().evaluate(ctx({}, 404, errorBody(404, 'not_found')))).toBeUndefined();
    expect(c().evaluate(ctx({}, 500, errorBody(500)))).toBeUndefined();
  });
  it('fails for another body or a different status', () => {
    expect(c().evaluate(ctx({}, 404, { message: 'no code' }))).toBe('body is not an Error object');
    expect(c().evaluate(ctx({}, 404, undefined))).toBe('body is not an Error object');
    expect(c().evaluate(ctx({}, 409, errorBody(400)))).toBe('body status 400 != HTTP 409');
  });
  it('skips a success', () => {
    expect(c().evaluate(ctx({}, 200, { anything: true }))).toBe(SKIP);
    expect(c().evaluate(ctx({}, 304, undefined))).toBe(SKIP);
  });
});

describe('json-content-type', () => {
  const c = () => check('json-content-type');
  it('passes for application/json, with or without parameters', () => {
    expect(c().evaluate(ctx({ 'content-type': 'application/json' }))).toBeUndefined();
    expect(c().evaluate(ctx({ 'content-type': 'Application/JSON; charset=utf-8' }))).toBeUndefined();
  });
  it('fails for another type or none', () => {
    expect(c().evaluate(ctx({ 'content-type': 'text/plain' }))).toBe("Content-Type 'text/plain'");
    expect(c().evaluate(ctx({ 'content-type': 'application/jsonp' }))).toBe(
      "Content-Type 'application/jsonp'",
    );
    expect(c().evaluate(ctx({ 'content-type': undefined }))).toBe("Content-Type ''");
  });
  it('skips a response without a body', () => {
    const empty = makeContext(
      makeAttempt(listPets, { status: 204, headers: { ...okHeaders(T0 + 10), 'content-type': undefined } }),
    );
    expect(empty.attempt.body.text).toBe('');
    expect(c().evaluate(empty)).toBe(SKIP);
  });
});

describe('deprecation-headers', () => {
  const c = () => check('deprecation-headers');
  const deprecated = (headers: Record<string, string | undefined>) =>
    makeContext(
      makeAttempt(getPetById, {
        json: { id: 1, name: 'Rex', categoryId: 1 },
        headers: { ...okHeaders(T0 + 10), ...headers },
      }),
    );
  const good = { deprecation: '@1767225600', sunset: 'Fri, 30 Jun 2028 00:00:00 GMT' };
  it('passes with Deprecation @<unix> and a Sunset no earlier than it', () => {
    expect(getPetById.deprecated).toBe(true);
    expect(c().evaluate(deprecated(good))).toBeUndefined();
    expect(c().evaluate(deprecated({ ...good, sunset: 'Thu, 01 Jan 2026 00:00:00 GMT' }))).toBeUndefined();
  });
  it('fails for a missing or malformed header, or a Sunset before the Deprecation', () => {
    expect(c().evaluate(deprecated({ ...good, deprecation: undefined }))).toBe('no Deprecation');
    expect(c().evaluate(deprecated({ ...good, deprecation: 'true' }))).toBe("Deprecation 'true'");
    expect(c().evaluate(deprecated({ ...good, sunset: undefined }))).toBe('no Sunset');
    expect(c().evaluate(deprecated({ ...good, sunset: '2028-06-30' }))).toBe("Sunset '2028-06-30'");
    expect(c().evaluate(deprecated({ ...good, sunset: 'Wed, 31 Dec 2025 00:00:00 GMT' }))).toBe(
      'Sunset is earlier than Deprecation',
    );
  });
  it('skips an operation that is not deprecated', () => {
    expect(listPets.deprecated).toBe(false);
    expect(c().evaluate(ctx({ deprecation: undefined, sunset: undefined }))).toBe(SKIP);
  });
});

describe('retry-after-matches-reset', () => {
  const c = () => check('retry-after-matches-reset');
  const now = Math.ceil((T0 + 10) / 1000);
  const limited = (retryAfter: string | undefined, reset: number) =>
    ctx(
      { 'retry-after': retryAfter, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      429,
      errorBody(429, 'rate_limited'),
    );
  it('passes when both name the same time, within the rounding of each', () => {
    expect(c().evaluate(limited('30', now + 30))).toBeUndefined();
    expect(c().evaluate(limited('1', now + 2))).toBeUndefined();
    expect(c().evaluate(limited(formatHttpDate(new Date((now + 30) * 1000)), now + 30))).toBeUndefined();
  });
  it('fails when Retry-After ends well after Reset, not before it (a partial return)', () => {
    expect(c().evaluate(limited('35', now + 30))).toBe(`Retry-After ends 4.0 s after Reset ${now + 30}`);
    expect(c().evaluate(limited('1', now + 30))).toBeUndefined();
  });
  it('skips other statuses, and a 429 without a valid Retry-After or Reset', () => {
    expect(c().evaluate(ctx({ 'retry-after': '1' }))).toBe(SKIP);
    expect(c().evaluate(limited(undefined, now + 30))).toBe(SKIP);
    expect(c().evaluate(limited('soon', now + 30))).toBe(SKIP);
    expect(
      c().evaluate(ctx({ 'retry-after': '1', 'x-ratelimit-reset': undefined }, 429, errorBody(429))),
    ).toBe(SKIP);
  });
});

describe('ratelimit-429-not-cacheable', () => {
  const c = () => check('ratelimit-429-not-cacheable');
  const limited = (headers: Record<string, string | undefined>) =>
    ctx({ 'retry-after': '1', ...headers }, 429, errorBody(429, 'rate_limited'));
  it('passes without caching headers, or with directives that forbid storing', () => {
    expect(c().evaluate(limited({}))).toBeUndefined();
    expect(c().evaluate(limited({ 'cache-control': 'no-store' }))).toBeUndefined();
    expect(c().evaluate(limited({ 'cache-control': 'public, max-age=60, no-store' }))).toBeUndefined();
    expect(c().evaluate(limited({ 'cache-control': 'max-age=0' }))).toBeUndefined();
    expect(c().evaluate(limited({ 'cache-control': 'private, s-maxage=60' }))).toBeUndefined();
    expect(c().evaluate(limited({ expires: 'Thu, 01 Jan 1970 00:00:00 GMT' }))).toBeUndefined();
    expect(c().evaluate(limited({ expires: 'never' }))).toBeUndefined();
  });
  it('fails public, max-age > 0, s-maxage > 0, or an Expires in the future', () => {
    expect(c().evaluate(limited({ 'cache-control': 'public, max-age=60' }))).toBe('Cache-Control: public');
    expect(c().evaluate(limited({ 'cache-control': 'Max-Age="30"' }))).toBe('Cache-Control: max-age=30');
    expect(c().evaluate(limited({ 'cache-control': 's-maxage=5' }))).toBe('Cache-Control: s-maxage=5');
    const later = formatHttpDate(new Date(T0 + 3_600_000));
    expect(c().evaluate(limited({ expires: later }))).toBe(`Expires ${later} is in the future`);
  });
  it('skips any other status', () => {
    expect(c().evaluate(ctx({ 'cache-control': 'public, max-age=60' }))).toBe(SKIP);
  });
});

describe('sunset-link', () => {
  const c = () => check('sunset-link');
  const deprecated = (headers: Record<string, string | undefined>) =>
    makeContext(
      makeAttempt(getPetById, {
        json: { id: 1, name: 'Rex', categoryId: 1 },
        headers: { ...okHeaders(T0 + 10), deprecation: '@1767225600', ...headers },
      }),
    );
  it('passes with a Link of rel="sunset", among others', () => {
    expect(c().evaluate(deprecated({ link: '</openapi.yaml>; rel="sunset"' }))).toBeUndefined();
    expect(
      c().evaluate(deprecated({ link: '</a>; rel=next, </docs>; rel="Sunset alternate"' })),
    ).toBeUndefined();
  });
  it('fails without a Link, or without that relation', () => {
    expect(c().evaluate(deprecated({}))).toBe('no Link');
    expect(c().evaluate(deprecated({ link: '</docs>; rel="deprecation"' }))).toBe(
      `no rel="sunset" in Link '</docs>; rel="deprecation"'`,
    );
  });
  it('skips an operation that is not deprecated', () => {
    expect(c().evaluate(ctx())).toBe(SKIP);
  });
});

describe('responseChecks', () => {
  it('gives fresh instances each run, every check of the catalogue among them, the schema last', () => {
    const a = responseChecks();
    const b = responseChecks();
    expect(a.map((c) => c.id)).toEqual(b.map((c) => c.id));
    for (const c of CHECKS) expect(a.map((x) => x.id)).toContain(c.id);
    expect(a.at(-1)?.id).toBe('response-schema');
    expect(a.find((c) => c.id === 'ratelimit-remaining-never-rises')).not.toBe(
      b.find((c) => c.id === 'ratelimit-remaining-never-rises'),
    );
    expect(new Set(allCheckIds()).size).toBe(allCheckIds().length);
  });

  it('are all in docs/checks.md, each with the fault that proves it or the unit test for client ones', () => {
    const docs = readFileSync(new URL('../../../docs/checks.md', import.meta.url), 'utf8');
    for (const id of allCheckIds()) expect(docs, id).toMatch(new RegExp(`^\\| \`${id}\` \\|`, 'm'));
  });
});
