import { describe, expect, it } from 'vitest';
import { readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import {
  classifyResponse,
  keepsAway,
  mayBeBareRefusal,
  passedLimiter,
  RESPONSE_RULES,
  type ResponseSeen,
  retriesAfterError,
  waitAfterRefusal,
} from '../../src/api/responses.ts';

const AT = Date.UTC(2027, 0, 1, 12, 0, 0);

/** An answer as the client reads it: its quota fields read once from its headers. */
function seen(status: number, headers: Record<string, string> = {}, json?: unknown): ResponseSeen {
  return { status, headers, view: readRateLimit(headers, AT), body: { json } };
}

const spent = {
  'x-ratelimit-limit': '10',
  'x-ratelimit-remaining': '0',
  'x-ratelimit-reset': String(AT / 1000 + 7),
};
const left = { ...spent, 'x-ratelimit-remaining': '3' };

describe('classifyResponse: what an answer means, whatever room reads it', () => {
  it("a 429 is the limiter's refusal, with or without anything else", () => {
    expect(classifyResponse(seen(429))).toBe('refused');
    expect(classifyResponse(seen(429, left))).toBe('refused');
  });

  it('a 503 or 403 is one with a sign: Retry-After, a spent quota in any dialect, or (503) a problem type', () => {
    for (const status of [503, 403]) {
      expect(classifyResponse(seen(status, { 'retry-after': '5' })), String(status)).toBe('refused');
      expect(classifyResponse(seen(status, spent)), String(status)).toBe('refused');
      expect(classifyResponse(seen(status, { ratelimit: '"default";r=0;t=5' })), String(status)).toBe(
        'refused',
      );
      expect(classifyResponse(seen(status, { 'ratelimit-remaining': '0', 'ratelimit-reset': '5' }))).toBe(
        'refused',
      );
    }
    const problem = {
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Too many',
    };
    expect(classifyResponse(seen(503, {}, problem))).toBe('refused');
    expect(classifyResponse(seen(503, {}, { type: 'temporary-reduced-capacity' }))).toBe('refused');
  });

  it('a bare 503 is unexplained; a bare 403 stays an authorization failure; a 503 with quota left too', () => {
    expect(classifyResponse(seen(503))).toBe('unexplained');
    expect(classifyResponse(seen(503, left))).toBe('unexplained');
    expect(classifyResponse(seen(503, { 'retry-after': 'soon' }))).toBe('unexplained');
    expect(classifyResponse(seen(503, {}, { type: 'about:blank' }))).toBe('unexplained');
    expect(classifyResponse(seen(403))).toBe('admitted');
    expect(classifyResponse(seen(403, left))).toBe('admitted');
    // A problem type is a 503's sign only: a 403 says it by its fields.
    expect(classifyResponse(seen(403, {}, { type: 'quota-exceeded' }))).toBe('admitted');
  });

  it("a status the user names is the limiter's refusal whatever it carries", () => {
    const named = new Set([403, 503, 418]);
    expect(classifyResponse(seen(403), named)).toBe('refused');
    expect(classifyResponse(seen(503), named)).toBe('refused');
    expect(classifyResponse(seen(418), named)).toBe('refused');
    expect(classifyResponse(seen(404), named)).toBe('admitted');
  });

  it('everything else: 2xx and 4xx admitted, 5xx server errors, no answer a transport error', () => {
    expect(classifyResponse(seen(200, spent))).toBe('admitted');
    expect(classifyResponse(seen(404))).toBe('admitted');
    expect(classifyResponse(seen(500, { 'retry-after': '5' }))).toBe('server-error');
    expect(classifyResponse(seen(502))).toBe('server-error');
    expect(classifyResponse({ status: 0 })).toBe('transport-error');
  });

  it('reads the body only for a 503 that carries no other sign', () => {
    let reads = 0;
    const body = {
      get json() {
        reads++;
        return undefined;
      },
    };
    classifyResponse({ status: 429, body });
    classifyResponse({ status: 403, body });
    classifyResponse({ status: 200, body });
    classifyResponse({ ...seen(503, { 'retry-after': '1' }), body });
    expect(reads).toBe(0);
    classifyResponse({ status: 503, body });
    expect(reads).toBe(1);
  });
});

describe('what each kind asks of a client', () => {
  it('keeps away after a refusal and a bare 503; counts what passed the limiter; retries errors and bare 503s of idempotent methods', () => {
    expect(
      ['admitted', 'refused', 'unexplained', 'server-error', 'transport-error'].map((k) =>
        keepsAway(k as never),
      ),
    ).toEqual([false, true, true, false, false]);
    expect(passedLimiter('admitted') && passedLimiter('server-error')).toBe(true);
    expect(passedLimiter('refused') || passedLimiter('unexplained') || passedLimiter('transport-error')).toBe(
      false,
    );
    expect(retriesAfterError('server-error', 'GET')).toBe(true);
    expect(retriesAfterError('transport-error', 'PUT')).toBe(true);
    expect(retriesAfterError('server-error', 'POST')).toBe(false);
    // A bare 503 may be overload: retried as a 5xx is, an idempotent method only.
    expect(retriesAfterError('unexplained', 'GET')).toBe(true);
    expect(retriesAfterError('unexplained', 'POST')).toBe(false);
    // While a run prepares, a bare 503 is sent again whatever the method; a server error is not.
    expect(retriesAfterError('unexplained', 'POST', true)).toBe(true);
    expect(retriesAfterError('server-error', 'POST', true)).toBe(false);
    expect(retriesAfterError('refused', 'GET')).toBe(false);
    expect(mayBeBareRefusal('admitted', 403)).toBe(true);
    expect(mayBeBareRefusal('refused', 403)).toBe(false);
    expect(mayBeBareRefusal('admitted', 401)).toBe(false);
  });
});

describe('waitAfterRefusal: how long a refusal keeps the key away, and who said so', () => {
  const backoff = { baseMs: 1000, capMs: 60_000, random: () => 0.5 };
  const margin = RESPONSE_RULES.toldWaitMarginMs;

  it('Retry-After first, never shortened, in either form', () => {
    expect(waitAfterRefusal({ retryAfter: '12', resetAt: AT + 3000 }, AT, 1, backoff)).toEqual({
      ms: 12_000 + margin,
      by: 'Retry-After 12 s',
    });
    const date = new Date(AT + 4000).toUTCString();
    expect(waitAfterRefusal({ retryAfter: date }, AT, 1, backoff)).toEqual({
      ms: 4000 + margin,
      by: `Retry-After ${date}`,
    });
  });

  it('else a reset told in the future, else full-jitter backoff on the refusals in a row', () => {
    expect(
      waitAfterRefusal({ resetAt: AT + 7000, resetBy: 'X-RateLimit-Reset 1798804807' }, AT, 3, backoff),
    ).toEqual({
      ms: 7000 + margin,
      by: 'X-RateLimit-Reset 1798804807',
    });
    // A reset in the past tells nothing: the backoff's third step, 4 s at most, half of it here.
    expect(waitAfterRefusal({ resetAt: AT - 1 }, AT, 3, backoff)).toEqual({
      ms: 2000 + margin,
      by: 'backoff after 3 refusals',
    });
    expect(waitAfterRefusal({}, AT, 20, backoff).ms).toBe(30_000 + margin);
  });
});
