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
  await redis?.stop();
});

const identity = (name: string, o: Partial<FleetIdentity> = {}): FleetIdentity => ({
  name,
  generators: 3,
  digest: 'abc',
  host: `host-${stores.length}`,
  ...o,
});
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

  it('hands setup data over, and names the last of N to finish', async () => {
    const a = await generator(identity('phases'));
    const b = await generator(identity('phases'));
    expect(await b.setup()).toBeUndefined();
    await a.putSetup({ data: { categoryId: 7 } });
    expect(await b.setup()).toEqual({ data: { categoryId: 7 } });
    expect([await a.finished(), await b.finished(), await a.finished()]).toEqual([1, 2, 3]);
  });
});
