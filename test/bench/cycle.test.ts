import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import type { Operation } from '../../src/api/operations.ts';
import { requestPath } from '../../src/api/request.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { captureCall } from '../../src/bench/capture-call.ts';
import { backfillOmitted, shareOf } from '../../src/bench/coordinated-omission.ts';
import { DEFAULT_OPERATIONS, parseOperationMix } from '../../src/bench/operation-mix.ts';
import { ResponsePairer } from '../../src/bench/pairing.ts';
import { buildCycle } from '../../src/bench/request-cycle.ts';
import { STEPS } from '../../src/bench/steps.ts';
import { newHistogram } from '../../src/record/histogram.ts';

let operations: Map<string, Operation>;
let ids: string[];
beforeAll(async () => {
  const spec = await loadSpec();
  operations = new Map(spec.operations.map((op) => [op.id, op]));
  ids = [...operations.keys()];
});

describe('--operations', () => {
  it('has a request for every operation of the table, and a read-mostly default', () => {
    expect(Object.keys(STEPS).sort()).toEqual([...ids].sort());
    const mix = parseOperationMix(DEFAULT_OPERATIONS, ids);
    const reads = mix.filter((e) => operations.get(e.operationId)?.method === 'GET');
    const total = (list: typeof mix) => list.reduce((n, e) => n + e.weight, 0);
    expect(total(reads) / total(mix)).toBeGreaterThanOrEqual(0.8);
  });

  it('takes ids with optional whole weights', () => {
    expect(parseOperationMix('getPetById, listPets:3', ids)).toEqual([
      { operationId: 'getPetById', weight: 1 },
      { operationId: 'listPets', weight: 3 },
    ]);
  });

  it.each([
    ['nosuchOp', /unknown operation 'nosuchOp'/],
    ['listPets:0', /whole weight/],
    ['listPets:1.5', /whole weight/],
    ['listPets:2:3', /OPERATION:WEIGHT/],
    ['listPets,,getPetById', /empty item/],
    ['listPets,listPets:2', /named twice/],
  ])('refuses %s in one line', (text, message) => {
    expect(() => parseOperationMix(text, ids)).toThrow(InputError);
    expect(() => parseOperationMix(text, ids)).toThrow(message);
    expect(() => parseOperationMix(text, ids)).toThrow(/^[^\n]+$/);
  });
});

describe('the request cycle', () => {
  it('is built by the typed API: path values, query and JSON body as the client sends them', () => {
    const call = captureCall((api) => api.placeOrder({ petId: 7, quantity: 1 }));
    expect(call).toEqual({ operationId: 'placeOrder', input: { body: { petId: 7, quantity: 1 } } });
    const op = operations.get('listPets') as Operation;
    expect(requestPath(op, {}, { status: 'available', limit: 20, offset: undefined })).toBe(
      '/pets?status=available&limit=20',
    );
    expect(requestPath(operations.get('getPetById') as Operation, { petId: 'a/b' })).toBe('/pets/a%2Fb');
  });

  it('repeats each operation by its weight, once per prepared pet, under the base path', () => {
    const mix = parseOperationMix('getPetById:2,updatePet', ids);
    const cycle = buildCycle(mix, { categoryIds: [4], petIds: [11, 12] }, operations, '/api');
    expect(cycle.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/pets/11',
      'GET /api/pets/11',
      'PUT /api/pets/11',
      'GET /api/pets/12',
      'GET /api/pets/12',
      'PUT /api/pets/12',
    ]);
    expect(JSON.parse(cycle[2]?.body as string)).toEqual({
      name: 'load-test pet 11 (renamed)',
      categoryId: 4,
      status: 'available',
    });
  });

  it("sends the key where each operation's scheme puts it: a header, as-is, or the query", () => {
    const mix = parseOperationMix('listPets,getPetById,deletePet', ids);
    const placed = new Map(operations);
    const place = (id: string, auth: Operation['auth']) =>
      placed.set(id, { ...(operations.get(id) as Operation), auth });
    place('listPets', { in: 'query', name: 'api_key', from: 'test' });
    place('getPetById', { in: 'header', name: 'api_key', bearer: false, from: 'test' });
    place('deletePet', { in: 'query', name: 'api_key', from: 'test' });
    const cycle = buildCycle(mix, { categoryIds: [1], petIds: [3] }, placed, '/api', 'k&1');
    const byId = new Map(cycle.map((r) => [r.operationId, r]));
    expect(byId.get('listPets')?.path).toMatch(/^\/api\/pets\?.*api_key=k%261$/);
    expect(byId.get('listPets')?.headers).toEqual({ accept: 'application/json' });
    expect(byId.get('getPetById')?.headers).toEqual({ api_key: 'k&1', accept: 'application/json' });
    expect(byId.get('createPet')?.headers).toEqual({
      authorization: 'Bearer k&1',
      accept: 'application/json',
      'content-type': 'application/json',
    });
    // A consumer's path is filled at send time: the key stays after the created id.
    expect(byId.get('deletePet')?.consumes).toEqual({
      resource: 'pet',
      before: '/api/pets/',
      after: '?api_key=k%261',
    });
  });

  it('puts the creating request before a consumer, whose path takes the created id', () => {
    const mix = parseOperationMix('deletePet,completeOrder', ids);
    const cycle = buildCycle(mix, { categoryIds: [1], petIds: [3] }, operations);
    expect(cycle.map((r) => [r.operationId, r.provides, r.consumes])).toEqual([
      ['createPet', 'pet', undefined],
      ['deletePet', undefined, { resource: 'pet', before: '/pets/', after: '' }],
      ['placeOrder', 'order', undefined],
      ['completeOrder', undefined, { resource: 'order', before: '/store/orders/', after: '/complete' }],
    ]);
  });
});

describe('pairing onResponse with the response event', () => {
  it('gives each response event the request answered just before it, and counts a mismatch', () => {
    const pairer = new ResponsePairer();
    pairer.answered(3, 200, '{"id":1}', { 'X-RateLimit-Remaining': '5' });
    expect(pairer.take(200)).toBe(3);
    expect(pairer.body).toBe('{"id":1}');
    expect(pairer.take(200)).toBe(-1);
    pairer.answered(4, 404, '', undefined);
    expect(pairer.take(200)).toBe(-1);
    expect(pairer.unpaired).toBe(2);
  });
});

describe('coordinated-omission correction', () => {
  it("back-fills what HdrHistogram's recordValueWithExpectedInterval adds beside the value", () => {
    const ours = newHistogram();
    ours.recordValue(1000);
    backfillOmitted(ours, 1000, 300);
    const reference = newHistogram();
    reference.recordValueWithExpectedInterval(1000, 300);
    expect(ours.totalCount).toBe(reference.totalCount);
    expect(ours.totalCount).toBe(3);
    expect(ours.minNonZeroValue).toBe(reference.minNonZeroValue);
    const none = newHistogram();
    backfillOmitted(none, 500, 300);
    expect(none.totalCount).toBe(0);
  });

  it('splits a rate over connections as autocannon does', () => {
    expect([0, 1, 2].map((i) => shareOf(10, 3, i))).toEqual([4, 3, 3]);
    expect([0, 1, 2, 3].map((i) => shareOf(2, 4, i))).toEqual([1, 1, 0, 0]);
  });
});
