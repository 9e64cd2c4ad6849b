import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FleetIdentity, FleetStore } from '../../src/fleet/fleet-store.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

/** The fleet's meeting place, a real redis-server: claims, refusals, the one start, setup and the last to finish. */
let redis: RedisProcess;
const stores: FleetStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await Promise.all(raws.map((r) => r.quit()));
  await redis?.stop();
});

const identity = (name: string, o: Partial<FleetIdentity> = {}): FleetIdentity => ({
  name,
  generators: 3,
  digest: 'abc',
  host: `host-${stores.length}`,
  ...o,
});
const raws: Redis[] = [];
async function connectRaw(): Promise<Redis> {
  const raw = new Redis(redis.url);
  raws.push(raw);
  return raw;
}
async function generator(id: FleetIdentity): Promise<FleetStore> {
  const store = await FleetStore.connect(redis.url, id, 60);
  stores.push(store);
  return store;
}

describe('joining a fleet', () => {
  it('gives the lowest free index to each, then refuses a fourth of three', async () => {
    const got: number[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await (await generator(identity('claims'))).join(0);
      got.push(outcome.joined ? outcome.index : -1);
    }
    expect(got).toEqual([1, 2, 3]);
    expect(await (await generator(identity('claims'))).join(0)).toMatchObject({ joined: false, why: 'full' });
    expect(await stores[0]?.joined()).toBe(3);
  });

  it('refuses an index taken, another N and another scenario, saying what was there', async () => {
    expect(await (await generator(identity('refusals'))).join(2)).toEqual({ joined: true, index: 2 });
    expect(await (await generator(identity('refusals'))).join(2)).toMatchObject({
      joined: false,
      why: 'taken',
      told: expect.stringMatching(/^host-/),
    });
    expect(await (await generator(identity('refusals', { generators: 4 }))).join(0)).toEqual({
      joined: false,
      why: 'generators',
      told: '3',
    });
    expect(await (await generator(identity('refusals', { digest: 'other' }))).join(0)).toMatchObject({
      joined: false,
      why: 'digest',
    });
  });

  it('starts every generator at one instant of the store clock, a lead ahead of the first to ask', async () => {
    const a = await generator(identity('start'));
    const b = await generator(identity('start'));
    const asked = Date.now();
    const first = await a.startAt(1500);
    const second = await b.startAt(1500);
    // Both read the same instant (to the offset each measured), about 1.5 s ahead.
    expect(Math.abs(first - second)).toBeLessThan(50);
    expect(first - asked).toBeGreaterThan(1300);
    expect(first - asked).toBeLessThan(1700);
  });

  it('hands setup data over', async () => {
    const a = await generator(identity('phases'));
    const b = await generator(identity('phases'));
    expect(await b.setup()).toBeUndefined();
    await a.putSetup({ data: { categoryId: 7 } });
    expect(await b.setup()).toEqual({ data: { categoryId: 7 } });
  });
});

describe('a fleet running and ending', () => {
  it('tells each shard alive, finished, stored or silent, with its snapshot and result unzipped', async () => {
    const [a, b, c] = [
      await generator(identity('shards')),
      await generator(identity('shards')),
      await generator(identity('shards')),
    ] as [FleetStore, FleetStore, FleetStore];
    for (const s of [a, b, c]) await s.join(0);
    await a.beat(1);
    await b.beat(2, 150);
    await c.beat(3);
    await a.putSnapshot(1, '{"n":1}');
    await b.putSnapshot(2, '{"n":2}');
    await a.putResult(1, '{"final":1}');
    await a.markFinished(1);
    await new Promise((r) => setTimeout(r, 300));
    const held = await c.shards(true);
    expect(held.map((h) => [h.index, h.alive, h.finished, h.stored])).toEqual([
      [1, true, true, true],
      [2, false, false, false],
      [3, true, false, false],
    ]);
    expect(held[0]).toMatchObject({
      result: '{"final":1}',
      snapshot: '{"n":1}',
      host: expect.stringMatching(/^host-/),
    });
    // Generator 2 went silent: what stands for it is its last snapshot.
    expect(held[1]).toMatchObject({ result: undefined, snapshot: '{"n":2}' });
    expect((await c.shards(false))[0]).toMatchObject({ stored: true, result: undefined });
  });

  it('gives a claim to one generator only, keeps the first stop asked, and the fleet result for later', async () => {
    const [a, b] = [await generator(identity('claims-end')), await generator(identity('claims-end'))];
    const claims = await Promise.all([a.claim('teardown'), b.claim('teardown'), a.claim('teardown')]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await b.stopAsked()).toBeNull();
    await a.askStop('first');
    await b.askStop('second');
    expect(await a.stopAsked()).toBe('first');
    expect(await b.fleetResult()).toBeUndefined();
    await a.putFleetResult('{"merged":true}');
    expect(await b.fleetResult()).toBe('{"merged":true}');
  });

  it("clears an old fleet's keys when a new one takes its name, once the old one's meta expired", async () => {
    const old = await generator(identity('reused', { generators: 1 }));
    expect(await old.join(0)).toEqual({ joined: true, index: 1 });
    await old.putResult(1, '{"yesterday":1}');
    await old.markFinished(1);
    await old.claim('result');
    await old.askStop('old breach');
    await old.putFleetResult('{"yesterday":true}');
    // The meta (and the shards' claims) expired; the rest would have lived on.
    await (await connectRaw()).del('petstore-load:fleet:reused:meta');
    const fresh = await generator(identity('reused', { generators: 1 }));
    expect(await fresh.join(0)).toEqual({ joined: true, index: 1 });
    expect(await fresh.stopAsked()).toBeNull();
    expect(await fresh.fleetResult()).toBeUndefined();
    expect(await fresh.claim('result')).toBe(true);
    expect((await fresh.shards(true))[0]).toMatchObject({
      stored: false,
      finished: false,
      result: undefined,
    });
  });
});
