import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../../src/api/operations.ts';
import { type AttemptCheck, type Check, SKIP } from '../../../src/record/checks/check.ts';
import { CheckTally } from '../../../src/record/checks/tally.ts';
import { makeAttempt, makeContext, operation, T0 } from '../../helpers/unit-attempt.ts';

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

/** Decides by status: 200 passes, 500 fails, anything else skips. */
const byStatus: Check = {
  id: 'by-status',
  rule: 'a 500 fails',
  source: 'test',
  evaluate: ({ status }) => (status === 200 ? undefined : status === 500 ? `status ${status}` : SKIP),
};
const alwaysFails: Check = { id: 'always-fails', rule: 'never passes', source: 'test', evaluate: () => 'no' };

const ctx = (status: number, receivedAt = T0 + 10) =>
  makeContext(makeAttempt(listPets, { status, sentAt: receivedAt - 10, receivedAt }));

describe('CheckTally', () => {
  it('counts passes and failures per check, not skips, and returns the failures of a response', () => {
    const tally = new CheckTally([byStatus, alwaysFails]);
    expect(tally.evaluate(ctx(200))).toBe(1);
    expect(tally.evaluate(ctx(500))).toBe(2);
    expect(tally.evaluate(ctx(404))).toBe(1);
    const [a, b] = tally.snapshot();
    expect(a).toMatchObject({ id: 'by-status', rule: 'a 500 fails', source: 'test', passes: 1, failures: 1 });
    expect(b).toMatchObject({ id: 'always-fails', passes: 0, failures: 3 });
  });

  it('keeps the first five failures as samples', () => {
    const tally = new CheckTally([byStatus]);
    for (let i = 0; i < 12; i++) tally.evaluate(ctx(500, T0 + i * 1000));
    const [r] = tally.snapshot();
    expect(r?.failures).toBe(12);
    expect(r?.samples).toHaveLength(5);
    expect(r?.samples[0]).toEqual({ operation: 'listPets', status: 500, detail: 'status 500', at: T0 });
    expect(r?.samples.map((s) => s.at)).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * 1000));
  });

  it('gives a snapshot that later evaluations do not change', () => {
    const tally = new CheckTally([byStatus]);
    tally.evaluate(ctx(500));
    const before = tally.snapshot();
    tally.evaluate(ctx(500));
    tally.evaluate(ctx(200));
    expect(before[0]).toMatchObject({ passes: 0, failures: 1 });
    expect(before[0]?.samples).toHaveLength(1);
    expect(tally.snapshot()[0]).toMatchObject({ passes: 1, failures: 2 });
  });
});

describe('CheckTally with stateful and client checks', () => {
  it('lets stateful checks see every attempt and counts the verdicts they give later', () => {
    const seen: number[] = [];
    const deferred: Check = {
      id: 'deferred',
      rule: 'a 500 fails once the next attempt arrives',
      source: 'test',
      observe: (a) => seen.push(a.status),
      evaluate: () => SKIP,
      settle: (_now, final) =>
        final
          ? [
              { attempt: first, outcome: 'late' },
              { attempt: first, outcome: undefined },
            ]
          : [],
    };
    const first = makeAttempt(listPets, { status: 500 });
    const tally = new CheckTally([deferred]);
    tally.observe(first);
    expect(tally.evaluate(makeContext(first))).toBe(0);
    tally.observe(makeAttempt(listPets, { status: 0, headers: undefined }));
    expect(seen).toEqual([500, 0]);
    expect(tally.settle(T0 + 100, false)).toEqual([]);
    expect(tally.settle(T0 + 100, true)).toEqual([first]);
    expect(tally.snapshot()[0]).toMatchObject({
      passes: 1,
      failures: 1,
      samples: [{ operation: 'listPets', status: 500, detail: 'late', at: T0 + 10 }],
    });
  });

  it('reports the client checks after the response checks, in the same shape', () => {
    const client: AttemptCheck = {
      id: 'client-test',
      rule: 'counts attempts',
      source: 'test',
      observe: () => undefined,
      counts: () => ({ passes: 3, failures: 1, samples: [] }),
    };
    const tally = new CheckTally([byStatus], [client]);
    expect(tally.snapshot().map((r) => [r.id, r.passes, r.failures])).toEqual([
      ['by-status', 0, 0],
      ['client-test', 3, 1],
    ]);
  });
});
