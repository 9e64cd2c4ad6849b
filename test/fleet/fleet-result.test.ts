import { describe, expect, it } from 'vitest';
import { fleetResultOf, incomplete, partsOf } from '../../src/fleet/fleet-result.ts';
import type { ShardHeld } from '../../src/fleet/fleet-store.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

/** A shard as the store holds it: its result and snapshot as JSON text. */
function held(index: number, o: { result?: RunResult; snapshot?: RunResult; alive?: boolean }): ShardHeld {
  return {
    index,
    host: `host-${index}:1${index}`,
    alive: o.alive ?? false,
    finished: o.result !== undefined,
    stored: o.result !== undefined,
    result: o.result && JSON.stringify(o.result),
    snapshot: o.snapshot && JSON.stringify(o.snapshot),
  };
}

const partial = (r: RunResult, by: string, checkpoint = false): RunResult => ({
  ...r,
  meta: { ...r.meta, partial: true, interruptedBy: by, ...(checkpoint ? { checkpoint: true } : {}) },
});

describe("a fleet's result from its shards", () => {
  it('adds the shards up, names each in meta.fleet, and is whole when all finished', async () => {
    const shards = await Promise.all([10, 20, 30].map((n) => syntheticResult(ladder('listPets', n))));
    const result = fleetResultOf(
      'nightly',
      3,
      partsOf(
        shards.map((r, i) => held(i + 1, { result: r })),
        'nightly',
      ),
    );
    expect(result.overall.requests).toBe(60);
    // The merged histogram is the fleet's: p99 of 1..10, 1..20 and 1..30 ms together.
    expect(result.overall.service.p99).toBeGreaterThanOrEqual(29);
    expect(result.meta.partial).toBe(false);
    expect(result.meta.checkpoint).toBeUndefined();
    expect(result.meta.fleet).toEqual({
      name: 'nightly',
      generators: 3,
      lost: [],
      shards: [1, 2, 3].map((index, i) => ({
        index,
        host: `host-${index}:1${index}`,
        state: 'finished',
        startedAt: shards[i]?.meta.startedAt,
        endedAt: shards[i]?.meta.endedAt,
        requests: [10, 20, 30][i],
        share: 0.3333,
      })),
    });
    expect(incomplete(result)).toBe(false);
    // meta.fleet as result.schema.json has it: `report` and `merge` read it back.
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toBeUndefined();
  });

  it("counts a lost shard's last checkpoint, and says which shard, what it carried and what is counted", async () => {
    const [a, b] = await Promise.all([
      syntheticResult(ladder('listPets', 10)),
      syntheticResult(ladder('listPets', 4)),
    ]);
    const checkpoint = partial(b as RunResult, 'a checkpoint', true);
    const parts = partsOf(
      [held(1, { result: a }), held(2, { snapshot: checkpoint }), held(3, {})],
      'nightly',
    );
    expect(parts.map((p) => p.state)).toEqual(['finished', 'lost', 'lost']);
    const result = fleetResultOf('nightly', 3, parts);
    expect(result.overall.requests).toBe(14);
    expect(result.meta.partial).toBe(true);
    // Not a checkpoint itself: a fleet result written once every generator had ended or was lost.
    expect(result.meta.checkpoint).toBeUndefined();
    expect(result.meta.fleet?.lost).toEqual([2, 3]);
    expect(result.meta.fleet?.shards.map((s) => [s.state, s.requests])).toEqual([
      ['finished', 10],
      ['lost', 4],
      ['lost', 0],
    ]);
    expect(result.meta.interruptedBy).toMatch(
      /^fleet incomplete: generator 2 of 3 \(host-2:12\) lost: it carried 1\/3 of the workload; its checkpoint up to .+ is counted \(4 requests\); generator 3 of 3 \(host-3:13\) lost: it carried 1\/3 of the workload; nothing of it is counted$/,
    );
    expect(incomplete(result)).toBe(true);
    expect(resultProblem(JSON.parse(JSON.stringify(result)))).toBeUndefined();
  });

  it('tells a shard stopped by its user from one stopped by the fleet threshold', async () => {
    const r = await syntheticResult(ladder('listPets', 5));
    const parts = partsOf(
      [held(1, { result: partial(r, 'SIGINT') }), held(2, { result: partial(r, 'threshold p99<50ms') })],
      'f',
    );
    expect(parts.map((p) => p.state)).toEqual(['interrupted', 'finished']);
    const result = fleetResultOf('f', 2, parts);
    expect(result.meta.interruptedBy).toMatch(
      /^fleet incomplete: generator 1 of 2 \(host-1:11\) was stopped \(SIGINT\)/,
    );
  });

  it('refuses a stored text that is not a result, naming the shard', () => {
    const bad = { ...held(2, {}), result: '{"hello":1}' };
    expect(() => partsOf([bad], 'f')).toThrow(/^fleet f: generator 2's result: not a petstore-load result/);
  });
});
