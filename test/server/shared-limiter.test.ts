import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 20, perDay: 1000 } });

async function get(server: RunningServer): Promise<number> {
  const res = await fetch(`${server.url}/pets?limit=1`, {
    headers: { authorization: 'Bearer free-demo-key' },
  });
  await res.arrayBuffer();
  return res.status;
}

let redis: RedisProcess;
beforeAll(async () => {
  redis = await startRedis();
}, 20_000);
afterAll(() => redis?.stop());

describe('two reference servers with one --quota-store', () => {
  it('enforce one limit: 12 requests to one and 8 to the other spend the key, the 21st is refused', async () => {
    // Time scale 6: a 10 s window, long enough for the test's requests to stay inside it.
    const options = { timeScale: 6, plans: PLANS, quotaStore: redis.url };
    const [a, b] = await Promise.all([startServer(options), startServer(options)]);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push(await get(a));
      for (let i = 0; i < 8; i++) statuses.push(await get(b));
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(await get(a)).toBe(429);
      expect(await get(b)).toBe(429);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('without it, each instance counts alone (what the option is for)', async () => {
    const options = { timeScale: 6, plans: PLANS };
    const [a, b] = await Promise.all([startServer(options), startServer(options)]);
    try {
      for (let i = 0; i < 12; i++) await get(a);
      for (let i = 0; i < 8; i++) await get(b);
      expect(await get(b)).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses to start without its store, in one line', async () => {
    await expect(startServer({ quotaStore: 'redis://127.0.0.1:9' })).rejects.toThrow(
      /^quotaStore redis:\/\/127\.0\.0\.1:9: cannot connect \(connection refused\)$/,
    );
  });
});
