import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_SILENT_MS } from '../../src/api/redis.ts';
import { now } from '../../src/client/clock.ts';
import { MemoryQuotaStore, type QuotaSpec, type QuotaStore } from '../../src/client/quota-store.ts';
import { quotaKeyName, RedisQuotaStore } from '../../src/client/redis-quota-store.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

// 3 sends per second at most, spaced 100 ms: the 4th waits for the 1st to leave the span.
const SPEC: QuotaSpec = { spacingMs: 100, windows: [{ limit: 3, spanMs: 1000 }], lateMs: 50 };

let redis: RedisProcess;
const stores: QuotaStore[] = [];
beforeAll(async () => {
  redis = await startRedis();
}, 20_000);
afterAll(async () => {
  for (const s of stores) await s.close();
  await redis?.stop();
});

const kinds: [string, () => Promise<QuotaStore>][] = [
  ['memory', async () => new MemoryQuotaStore()],
  ['redis', () => RedisQuotaStore.connect(redis.url)],
];

describe.each(kinds)('%s quota store', (_kind, open) => {
  it('spaces reservations and holds each window to its limit, as one client across callers', async () => {
    const store = await open();
    stores.push(store);
    const key = `spacing-${Math.random()}`;
    const t0 = performance.now();
    const at: number[] = [];
    for (let i = 0; i < 5; i++) at.push(performance.now() - t0 + (await store.reserve(key, SPEC)));
    // As the local pacer's grid: no credit after idle, 100 ms apart (0, 100, 200); the 4th waits
    // for the first to leave the span (1000), and the 5th for the grid restarted there (1100).
    const expected = [0, 100, 200, 1000, 1100];
    at.forEach((t, i) => {
      expect(t, `reservation ${i}`).toBeGreaterThan((expected[i] as number) - 15);
      expect(t, `reservation ${i}`).toBeLessThan((expected[i] as number) + 40);
    });
  });

  it('a pause holds every caller until it ends, and is never shortened', async () => {
    const store = await open();
    stores.push(store);
    const key = `pause-${Math.random()}`;
    await store.pause(key, 600);
    await store.pause(key, 100);
    const left = await store.pauseLeft(key);
    expect(left).toBeGreaterThan(500);
    expect(left).toBeLessThanOrEqual(600);
    expect(await store.reserve(key, SPEC)).toBeGreaterThan(500);
    expect(await store.pauseLeft(`other-${Math.random()}`)).toBe(0);
  });
});

describe('the redis store', () => {
  it('two connections (two machines) share one key: together they keep the spacing', async () => {
    const a = await RedisQuotaStore.connect(redis.url);
    const b = await RedisQuotaStore.connect(redis.url);
    stores.push(a, b);
    const key = `shared-${Math.random()}`;
    const t0 = performance.now();
    const slots: number[] = [];
    for (const store of [a, b, a, b]) {
      const wait = await store.reserve(key, SPEC);
      // When the slot is, as late as this process can tell: the wait counts from when Redis ran the
      // reservation, before its answer came back. A loaded machine asks later and waits less (CI once
      // saw a's second wait 170 ms); the slots stay on the grid.
      slots.push(performance.now() - t0 + wait);
    }
    // One grid for both: b's first 100 ms after a's, a's next 100 ms later, b's then 300.
    for (const [i, at] of slots.entries()) expect(at, `reservation ${i}`).toBeGreaterThan(i * 100 - 15);
  });

  it('a store that stops answering is away from when its unanswered command was asked, not when it timed out', async () => {
    const own = await startRedis();
    const store = await RedisQuotaStore.connect(own.url);
    try {
      // A stopped process answers nothing and drops nothing, as a lost route does.
      own.child.kill('SIGSTOP');
      const asked = now();
      await expect(store.reserve('silent', SPEC)).rejects.toThrow();
      const failed = now();
      own.child.kill('SIGCONT');
      expect(failed - asked).toBeGreaterThanOrEqual(STORE_SILENT_MS - 1);
      const [outage] = store.watch.outages;
      expect(outage?.from).toBeGreaterThanOrEqual(asked);
      expect(outage?.from).toBeLessThan(asked + 100);
      expect(await store.watch.whenBack(new AbortController().signal, now() + 10_000)).toBe(true);
    } finally {
      own.child.kill('SIGCONT');
      await store.close();
      await own.stop();
    }
  });

  it('names a key by a digest, never the key itself', () => {
    const name = quotaKeyName('free-demo-key');
    expect(name).not.toContain('free-demo-key');
    expect(name).toMatch(/^petstore-load:quota:[0-9a-f]{24}$/);
  });

  it('fails to connect to a store that is not there, quickly and with the reason', async () => {
    await expect(RedisQuotaStore.connect('redis://127.0.0.1:9', 1000)).rejects.toThrow(
      /ECONNREFUSED|connect/,
    );
  });
});
