import { describe, expect, it } from 'vitest';
import {
  type DeclaredContract,
  declaredContract,
  declaredFor,
  declaredRateLimit,
  describeDeclared,
} from '../../src/api/declared-contract.ts';
import { acceptFor } from '../../src/api/operations.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { CONTRACT_IETF } from '../helpers/fixtures.ts';

const header = (example?: unknown) => ({
  schema: { type: 'string' },
  ...(example === undefined ? {} : { example }),
});

describe('the rate-limit dialect a response promises, from the names it declares', () => {
  it('X-RateLimit-*: the three legacy dialects, unless an example of Reset tells its unit', () => {
    const names = {
      'x-ratelimit-limit': header(),
      'x-ratelimit-remaining': header(),
      'x-ratelimit-reset': header(),
    };
    expect(declaredRateLimit(names)).toEqual({
      dialects: ['seed', 'seconds-until', 'unix-ms'],
      fields: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
    });
    expect(declaredRateLimit({ ...names, 'x-ratelimit-reset': header(30) })?.dialects).toEqual([
      'seconds-until',
    ]);
    expect(declaredRateLimit({ ...names, 'x-ratelimit-reset': header(1767225660) })?.dialects).toEqual([
      'seed',
    ]);
    expect(declaredRateLimit({ ...names, 'x-ratelimit-reset': header(1767225660000) })?.dialects).toEqual([
      'unix-ms',
    ]);
  });

  it('RateLimit: draft 7 or 8, told apart by an example (header, schema, 3.1 schema examples, named examples)', () => {
    expect(declaredRateLimit({ ratelimit: header() })?.dialects).toEqual(['ietf-8', 'ietf-7']);
    expect(declaredRateLimit({ ratelimit: header('limit=10, remaining=0, reset=10') })?.dialects).toEqual([
      'ietf-7',
    ]);
    expect(
      declaredRateLimit({ ratelimit: { schema: { type: 'string', examples: ['"default";r=50;t=30'] } } })
        ?.dialects,
    ).toEqual(['ietf-8']);
    expect(
      declaredRateLimit({ ratelimit: { examples: { one: { value: 'limit=5, remaining=1, reset=2' } } } })
        ?.dialects,
    ).toEqual(['ietf-7']);
    // An example no dialect reads leaves the names to decide.
    expect(declaredRateLimit({ ratelimit: header('ten per minute') })?.dialects).toEqual([
      'ietf-8',
      'ietf-7',
    ]);
  });

  it('RateLimit-Limit/-Remaining/-Reset: draft 6; RateLimit-Policy alone: some IETF draft; none: undefined', () => {
    expect(
      declaredRateLimit({
        'ratelimit-limit': header(),
        'ratelimit-remaining': header(),
        'ratelimit-policy': header(),
      }),
    ).toEqual({
      dialects: ['ietf-6'],
      fields: ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-policy'],
    });
    expect(declaredRateLimit({ 'ratelimit-policy': header() })?.dialects).toEqual([
      'ietf-8',
      'ietf-7',
      'ietf-6',
    ]);
    expect(declaredRateLimit({ 'cache-control': header(), 'retry-after': header() })).toBeUndefined();
  });

  it('legacy and IETF declared together: either keeps it, and every field is expected', () => {
    expect(
      declaredRateLimit({
        'x-ratelimit-remaining': header(),
        ratelimit: header('limit=1, remaining=1, reset=1'),
      }),
    ).toEqual({
      dialects: ['seed', 'seconds-until', 'unix-ms', 'ietf-7'],
      fields: ['x-ratelimit-remaining', 'ratelimit'],
    });
  });
});

describe('what a status declares', () => {
  const contract: DeclaredContract = declaredContract({
    '200': { headers: { RateLimit: header() } },
    '4XX': { headers: { 'Retry-After': header() } },
    default: { description: 'other' },
  });

  it('the exact code, then its range, then default; names in lower case', () => {
    expect(declaredFor(contract, 200)).toMatchObject({
      status: '200',
      headers: ['ratelimit'],
      retryAfter: false,
    });
    expect(declaredFor(contract, 429)).toMatchObject({
      status: '4XX',
      rateLimit: undefined,
      retryAfter: true,
    });
    expect(declaredFor(contract, 503)).toMatchObject({ status: 'default', headers: [] });
    expect(declaredFor(declaredContract({ '200': {} }), 404)).toBeUndefined();
  });

  it('in words, as print-config shows it', () => {
    expect(describeDeclared(declaredFor(contract, 200) as never)).toBe('ietf-8 or ietf-7 (RateLimit)');
    expect(describeDeclared(declaredFor(contract, 429) as never)).toBe('no rate-limit fields, Retry-After');
    expect(describeDeclared(declaredFor(contract, 500) as never)).toBe('not declared');
  });
});

describe('read at load', () => {
  it("our own document declares the seed's contract on every response, Retry-After on every 429", async () => {
    const spec = await loadSpec();
    for (const op of spec.operations) {
      expect(op.declared.byStatus.size, op.id).toBe(op.responses.length);
      for (const [status, declared] of op.declared.byStatus) {
        expect(declared.rateLimit?.dialects, `${op.id} ${status}`).toEqual(['seed']);
        expect(declared.retryAfter, `${op.id} ${status}`).toBe(status === '429');
      }
      expect(op.accept, op.id).toBe('application/json');
    }
  });

  it('a document of IETF RateLimit fields: draft 7 on its 200s and 429s, nothing on its 201 and 204', async () => {
    const ops = new Map((await loadSpec(CONTRACT_IETF)).operations.map((op) => [op.id, op]));
    const described = (id: string) =>
      Object.fromEntries(
        [...(ops.get(id)?.declared.byStatus ?? [])].map(([s, d]) => [s, describeDeclared(d)]),
      );
    expect(described('listBookings')).toEqual({
      '200': 'ietf-7 (RateLimit)',
      '400': 'ietf-7 (RateLimit)',
      '429': 'ietf-7 (RateLimit), Retry-After',
    });
    expect(described('createBooking')).toEqual({
      '201': 'not declared',
      '400': 'ietf-7 (RateLimit)',
      '429': 'ietf-7 (RateLimit), Retry-After',
    });
    expect(described('deleteBooking')).toEqual({
      '204': 'not declared',
      '429': 'ietf-7 (RateLimit), Retry-After',
    });
    expect(ops.get('listBookings')?.accept).toBe(
      'application/json, application/problem+json, application/xml;q=0.5',
    );
    expect(ops.get('createBooking')?.accept).toBe('application/json, application/problem+json');
    expect(ops.get('deleteBooking')?.accept).toBe('application/problem+json');
  });
});

describe('acceptFor', () => {
  it('the declared media types, JSON first, the others at q=0.5; none declared: application/json', () => {
    expect(acceptFor(undefined)).toBe('application/json');
    expect(acceptFor({ '204': { description: 'none' } })).toBe('application/json');
    expect(
      acceptFor({
        '200': { content: { 'application/xml': {}, 'application/json': {} } },
        '400': { content: { 'application/problem+json': {}, 'Application/JSON': {} } },
      }),
    ).toBe('application/json, application/problem+json, application/xml;q=0.5');
    // No JSON at all (a stream): each as declared, none preferred.
    expect(acceptFor({ '200': { content: { 'application/jsonl': {}, 'text/event-stream': {} } } })).toBe(
      'application/jsonl, text/event-stream',
    );
  });
});
