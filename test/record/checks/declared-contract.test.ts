import type { IncomingHttpHeaders } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../../src/api/openapi-document.ts';
import { buildOperationTable, type Operation } from '../../../src/api/operations.ts';
import { loadSpec } from '../../../src/api/spec.ts';
import { catalogue } from '../../../src/record/checks/catalogue.ts';
import { type CheckOutcome, NOT_DECLARED, SKIP } from '../../../src/record/checks/check.ts';
import type { Contract } from '../../../src/record/checks/contract.ts';
import { CheckTally } from '../../../src/record/checks/tally.ts';
import { CONTRACT_IETF } from '../../helpers/fixtures.ts';
import { errorBody, makeAttempt, makeContext, okHeaders, operation, T0 } from '../../helpers/unit-attempt.ts';

/*
 * Under `--contract document` (the default with a --spec of one's own) the rate-limit header checks
 * hold each response to what its operation's document declares for its status: nothing asked where
 * nothing is declared (counted as not declared), the declared dialect where one is, and a declared
 * field missing fails.
 */

let ops: Map<string, Operation>;
beforeAll(async () => {
  ops = new Map((await loadSpec(CONTRACT_IETF)).operations.map((op) => [op.id, op]));
});
const op = (id: string) => ops.get(id) as Operation;

const AT = T0 + 1000;
/** What the document's RateLimit example says, with the free plan's limit. */
const IETF7 = { ratelimit: 'limit=60, remaining=59, reset=30' };
const JSON_TYPE = { 'content-type': 'application/json' };

const IDS = [
  'ratelimit-headers-present',
  'ratelimit-dialect-matches-contract',
  'ratelimit-remaining-bounds',
  'ratelimit-limit-matches-plan',
  'ratelimit-reset-in-window',
  'retry-after-on-429',
];

function judge(
  operationId: string | Operation,
  status: number,
  headers: IncomingHttpHeaders,
  contract: Contract = 'document',
): Record<string, CheckOutcome> {
  const attempt = makeAttempt(typeof operationId === 'string' ? op(operationId) : operationId, {
    sentAt: AT - 10,
    receivedAt: AT,
    status,
    headers: { ...JSON_TYPE, ...headers },
    json: status === 429 ? errorBody(429, 'rate_limited') : {},
  });
  const ctx = makeContext(attempt);
  return Object.fromEntries(
    catalogue(contract)
      .filter((c) => IDS.includes(c.id))
      .map((c) => [c.id, c.evaluate(ctx)]),
  );
}

const failures = (outcomes: Record<string, CheckOutcome>) =>
  Object.fromEntries(Object.entries(outcomes).filter(([, o]) => typeof o === 'string'));

describe('a document declaring RateLimit (IETF draft 7) on its 200s and 429s, nothing on its 201', () => {
  it('a 200 that sends what is declared passes every rate-limit check, Limit against the plan included', () => {
    const outcomes = judge('listBookings', 200, IETF7);
    expect(failures(outcomes)).toEqual({});
    expect(outcomes['ratelimit-headers-present']).toBeUndefined();
    expect(outcomes['ratelimit-dialect-matches-contract']).toBeUndefined();
    // The Limit is read from the dictionary as from X-RateLimit-Limit: judged, and the plan's.
    expect(outcomes['ratelimit-limit-matches-plan']).toBeUndefined();
    expect(judge('listBookings', 200, { ratelimit: 'limit=10, remaining=9, reset=30' })).toMatchObject({
      'ratelimit-limit-matches-plan': 'Limit 10 is none of 60, 1000',
      'ratelimit-dialect-matches-contract': undefined,
    });
  });

  it('a 201 without any rate-limit field is not failed: not declared, where the seed contract fails it', () => {
    const outcomes = judge('createBooking', 201, {});
    expect(outcomes['ratelimit-headers-present']).toBe(NOT_DECLARED);
    expect(outcomes['ratelimit-dialect-matches-contract']).toBe(NOT_DECLARED);
    expect(failures(outcomes)).toEqual({});
    // --contract still overrides the document: under ietf the same 201 fails as before.
    expect(judge('createBooking', 201, {}, 'ietf')['ratelimit-headers-present']).toBe(
      'no rate-limit fields at all; the contract promises the RateLimit fields of an IETF draft',
    );
  });

  it('a status the document does not declare at all is not declared either', () => {
    expect(judge('createBooking', 503, {})['ratelimit-headers-present']).toBe(NOT_DECLARED);
  });

  it('a 200 that omits the declared field fails headers-present, naming the document', () => {
    expect(judge('listBookings', 200, {})).toMatchObject({
      'ratelimit-headers-present': 'no rate-limit fields at all; the document declares RateLimit for 200',
      'ratelimit-dialect-matches-contract': SKIP,
    });
    expect(
      judge('listBookings', 200, { ratelimit: 'limit=60, remaining=59' })['ratelimit-headers-present'],
    ).toBe('missing or malformed: RateLimit reset (declared for 200)');
    expect(judge('listBookings', 200, { ratelimit: 'limit=60;;' })['ratelimit-headers-present']).toBe(
      'missing or malformed: ratelimit (declared for 200)',
    );
  });

  it('X-RateLimit-* where RateLimit is declared: the dialect check fails alone, saying what each side said', () => {
    const outcomes = judge('listBookings', 200, okHeaders(AT));
    expect(failures(outcomes)).toEqual({
      'ratelimit-dialect-matches-contract':
        'the quota is told in X-RateLimit-*, Reset a Unix time in seconds; the document declares RateLimit for 200',
    });
    // Sent beside the declared field, it keeps the contract (express-rate-limit sends both).
    expect(failures(judge('listBookings', 200, { ...okHeaders(AT), ...IETF7 }))).toEqual({});
  });

  it('a 429 declaring RateLimit and Retry-After: judged on both', () => {
    const limited = { ratelimit: 'limit=60, remaining=0, reset=30', 'retry-after': '30' };
    expect(failures(judge('listBookings', 429, limited))).toEqual({});
    expect(judge('listBookings', 429, limited)['retry-after-on-429']).toBeUndefined();
    expect(judge('listBookings', 429, { ratelimit: limited.ratelimit })['retry-after-on-429']).toBe(
      'no Retry-After',
    );
  });
});

/** One operation of a document written inline: its responses' headers are what the test declares. */
function declaring(responses: Record<string, unknown>): Operation {
  const doc = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: { '/things': { get: { operationId: 'getThings', responses } } },
  } as unknown as OpenApiDocument;
  return buildOperationTable(doc)[0] as Operation;
}

const declared = (...names: string[]) => ({
  description: 'd',
  headers: Object.fromEntries(names.map((n) => [n, { schema: { type: 'string' } }])),
});

describe('only what is declared is asked for', () => {
  it('X-RateLimit-Remaining alone declared: a response carrying only it passes, where the seed asks for all three', () => {
    const getThings = declaring({ '200': declared('X-RateLimit-Remaining') });
    const onlyRemaining = { 'x-ratelimit-remaining': '5' };
    expect(judge(getThings, 200, onlyRemaining)['ratelimit-headers-present']).toBeUndefined();
    expect(judge(getThings, 200, onlyRemaining, 'seed')['ratelimit-headers-present']).toBe(
      'missing or not an integer: x-ratelimit-limit, x-ratelimit-reset',
    );
    expect(judge(getThings, 200, { 'x-ratelimit-remaining': 'five' })['ratelimit-headers-present']).toBe(
      'missing or not an integer: x-ratelimit-remaining (declared for 200)',
    );
  });

  it('RateLimit and RateLimit-Policy declared: a response without the policy fails, naming it', () => {
    const getThings = declaring({ '200': declared('RateLimit', 'RateLimit-Policy') });
    expect(judge(getThings, 200, IETF7)['ratelimit-headers-present']).toBe(
      'missing or malformed: ratelimit-policy (declared for 200)',
    );
    expect(
      judge(getThings, 200, { ...IETF7, 'ratelimit-policy': '60;w=60' })['ratelimit-headers-present'],
    ).toBe(undefined);
  });

  it('a 429 declaring no Retry-After is not judged on one; a 4XX range and default are read', () => {
    const getThings = declaring({ '4XX': declared('RateLimit'), default: declared('X-RateLimit-Limit') });
    const outcomes = judge(getThings, 429, { ratelimit: 'limit=60, remaining=0, reset=30' });
    expect(outcomes['retry-after-on-429']).toBe(NOT_DECLARED);
    expect(outcomes['ratelimit-headers-present']).toBeUndefined();
    expect(judge(getThings, 429, {}, 'seed')['retry-after-on-429']).toBe('no Retry-After');
    expect(judge(getThings, 500, IETF7)['ratelimit-dialect-matches-contract']).toBe(
      'the quota is told in RateLimit as a dictionary (IETF draft 7); the document declares X-RateLimit-Limit for default',
    );
  });

  it("an example's Reset unit is held to: seconds until the reset where a Unix time is declared fails the dialect", () => {
    const getThings = declaring({
      '200': {
        description: 'd',
        headers: { 'X-RateLimit-Reset': { schema: { type: 'integer' }, example: 1767225660 } },
      },
    });
    expect(judge(getThings, 200, { 'x-ratelimit-reset': '30' })['ratelimit-dialect-matches-contract']).toBe(
      "X-RateLimit-Reset is seconds until the reset, as @fastify/rate-limit sends; the document's example of it for 200 is a Unix time in seconds",
    );
  });
});

describe("our own document under --contract document: the seed's verdicts", () => {
  it('the same outcome as under the seed contract, for a good response, a bare one and another dialect', async () => {
    const listPets = await operation('listPets');
    for (const headers of [okHeaders(AT), { 'content-type': 'application/json' }, IETF7]) {
      const seed = judge(listPets, 200, headers, 'seed');
      const document = judge(listPets, 200, headers, 'document');
      expect(Object.keys(failures(document))).toEqual(Object.keys(failures(seed)));
    }
  });
});

describe('the tally counts what was not declared', () => {
  it('not declared is neither a pass nor a failure, and the result says how many', () => {
    const tally = new CheckTally(catalogue('document').filter((c) => IDS.includes(c.id)));
    const record = (id: string, status: number, headers: IncomingHttpHeaders) =>
      tally.evaluate(
        makeContext(makeAttempt(op(id), { status, headers: { ...JSON_TYPE, ...headers }, json: {} })),
      );
    record('listBookings', 200, IETF7);
    record('createBooking', 201, {});
    record('createBooking', 201, {});
    record('listBookings', 200, {});
    const byId = Object.fromEntries(tally.snapshot().map((c) => [c.id, c]));
    expect(byId['ratelimit-headers-present']).toMatchObject({ passes: 1, failures: 1, notDeclared: 2 });
    expect(byId['ratelimit-dialect-matches-contract']).toMatchObject({
      passes: 1,
      failures: 0,
      notDeclared: 2,
    });
    // A check that never met an undeclared response has no count of them.
    expect(byId['ratelimit-remaining-bounds']?.notDeclared).toBeUndefined();
  });
});
