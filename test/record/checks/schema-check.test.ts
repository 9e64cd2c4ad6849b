import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import { SKIP } from '../../../src/record/checks/check.ts';
import { responseSchemaCheck } from '../../../src/record/checks/schema-check.ts';
import { errorBody, makeAttempt, makeContext, operation, T0 } from '../../helpers/unit-attempt.ts';

let getPetById: Operation;
let listPets: Operation;
let deletePet: Operation;

beforeAll(async () => {
  getPetById = await operation('getPetById');
  listPets = await operation('listPets');
  deletePet = await operation('deletePet');
});

const pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

describe('response-schema check', () => {
  it('has a stable id and names its sampling rate in the rule', () => {
    const check = responseSchemaCheck(25);
    expect(check.id).toBe('response-schema');
    expect(check.rule).toMatch(/25 bodies per operation per second/);
  });

  it('passes a body that matches the schema declared for the status', () => {
    const check = responseSchemaCheck();
    expect(check.evaluate(makeContext(makeAttempt(getPetById, { json: pet })))).toBeUndefined();
    expect(
      check.evaluate(makeContext(makeAttempt(listPets, { json: [pet, { ...pet, id: 8 }] }))),
    ).toBeUndefined();
    expect(
      check.evaluate(
        makeContext(makeAttempt(getPetById, { status: 404, json: errorBody(404, 'not_found') })),
      ),
    ).toBeUndefined();
  });

  it('fails a body that does not match, with the validator message', () => {
    const check = responseSchemaCheck();
    const noId = check.evaluate(
      makeContext(makeAttempt(getPetById, { json: { name: 'Rex', categoryId: 1 } })),
    );
    expect(noId).toMatch(/^body.*must have required property 'id'/);
    const badStatus = check.evaluate(
      makeContext(makeAttempt(getPetById, { json: { ...pet, status: 'lost' } })),
    );
    expect(badStatus).toMatch(/^body\/status must be equal to one of the allowed values/);
    const notError = check.evaluate(makeContext(makeAttempt(getPetById, { status: 404, json: { oops: 1 } })));
    expect(notError).toMatch(/must have required property/);
  });

  it('fails a body that is not JSON', () => {
    const check = responseSchemaCheck();
    const a = makeAttempt(getPetById, { text: '<html>', json: undefined });
    expect(a.body.text).toBe('<html>');
    expect(check.evaluate(makeContext(a))).toBe('body is not JSON');
  });

  it('fails a status the operation does not declare', () => {
    const check = responseSchemaCheck();
    expect(check.evaluate(makeContext(makeAttempt(getPetById, { status: 418, json: errorBody(418) })))).toBe(
      'getPetById declares no response 418',
    );
  });

  it('passes an empty body where none is declared, fails a body there', () => {
    const check = responseSchemaCheck();
    expect(check.evaluate(makeContext(makeAttempt(deletePet, { status: 204 })))).toBeUndefined();
    expect(check.evaluate(makeContext(makeAttempt(deletePet, { status: 204, json: { id: 1 } })))).toBe(
      'deletePet 204 declares no body',
    );
  });

  it('validates up to perSecond bodies per operation per second and skips the rest', () => {
    const check = responseSchemaCheck(3);
    const at = (ms: number, op = getPetById, json: unknown = { broken: true }) =>
      check.evaluate(makeContext(makeAttempt(op, { sentAt: ms - 10, receivedAt: ms, json })));
    // T0 is a whole second: three validated (and failing), then skipped for the rest of that second.
    for (let i = 0; i < 3; i++) expect(at(T0 + i * 100)).toMatch(/must have required property/);
    expect(at(T0 + 500)).toBe(SKIP);
    expect(at(T0 + 999)).toBe(SKIP);
    // Another operation has its own budget.
    expect(at(T0 + 999, listPets, [pet])).toBeUndefined();
    // The next second starts a new budget.
    expect(at(T0 + 1000)).toMatch(/must have required property/);
  });
});
