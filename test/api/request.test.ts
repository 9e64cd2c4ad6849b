import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { KeyRequests } from '../../src/api/request.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { CONTRACT_IETF } from '../helpers/fixtures.ts';

let ops: Map<string, Operation>;
let listPets: Operation;
beforeAll(async () => {
  ops = new Map((await loadSpec(CONTRACT_IETF)).operations.map((op) => [op.id, op]));
  listPets = (await loadSpec()).operations.find((op) => op.id === 'listPets') as Operation;
});
const op = (id: string) => ops.get(id) as Operation;

const build = (requests: KeyRequests, operation: Operation, input = {}) =>
  requests.build('', operation, input, 1000);

describe("a request's Accept", () => {
  it("is its operation's declared media types; our own document's is application/json, as ever", () => {
    const requests = new KeyRequests('k');
    expect(build(requests, listPets).headers).toEqual({
      accept: 'application/json',
      authorization: 'Bearer k',
    });
    expect(build(requests, op('listBookings')).headers.accept).toBe(
      'application/json, application/problem+json, application/xml;q=0.5',
    );
    expect(build(requests, op('createBooking'), { body: {} }).headers).toEqual({
      accept: 'application/json, application/problem+json',
      authorization: 'Bearer k',
      'content-type': 'application/json',
    });
    // Made once per operation and sent as is on every request.
    expect(build(requests, op('listBookings')).headers).toBe(build(requests, op('listBookings')).headers);
  });
});

describe("a call's own headers", () => {
  it('go out over ours, names in lower case, without changing the headers other calls send', () => {
    const requests = new KeyRequests('k');
    const plain = build(requests, op('listBookings')).headers;
    const own = build(requests, op('listBookings'), {
      headers: { Accept: 'application/xml', 'X-Trace': 't1' },
    });
    expect(own.headers).toEqual({ accept: 'application/xml', authorization: 'Bearer k', 'x-trace': 't1' });
    expect(build(requests, op('listBookings')).headers).toBe(plain);
    expect(plain.accept).toBe('application/json, application/problem+json, application/xml;q=0.5');
  });

  it("never replace the key's header while a key of ours is sent; with auth 'none', they go as given", () => {
    const requests = new KeyRequests('k');
    const stray = { headers: { Authorization: 'Bearer other' } };
    expect(build(requests, op('listBookings'), stray).headers.authorization).toBe('Bearer k');
    expect(build(requests, op('listBookings'), { ...stray, auth: { key: 'k2' } }).headers.authorization).toBe(
      'Bearer k2',
    );
    expect(build(requests, op('listBookings'), { ...stray, auth: 'none' }).headers).toEqual({
      accept: 'application/json, application/problem+json, application/xml;q=0.5',
      authorization: 'Bearer other',
    });
  });
});
