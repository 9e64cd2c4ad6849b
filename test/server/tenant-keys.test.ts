import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { applyPlanOverrides, DEFAULT_PLANS, type Plan } from '../../src/api/plans.ts';
import { RATE_LIMIT_HEADER } from '../../src/api/rate-limit-headers.ts';
import { MAX_TENANT_KEYS, mintedKey } from '../../src/api/tenants.ts';
import { type RunningServer, type ServerOptions, startServer } from '../../src/server/index.ts';
import { validateServerOptions } from '../../src/server/options.ts';
import { PlanLimiter } from '../../src/server/rate-limiter.ts';
import { call, type Reply } from '../helpers/http.ts';

/**
 * Minted tenant keys (a mix's keys derived from a seed, so that no key is passed to the server) and
 * the sharedBucket fault (one bucket per plan: a noisy neighbour's requests spend the others'
 * quota). In-process servers on loopback; every window is long enough (10 s) for the few requests
 * of a test to land in one.
 */

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function start(options: ServerOptions): Promise<string> {
  const server = await startServer({ seedData: 2, ...options });
  servers.push(server);
  return server.url;
}

const header = (reply: Reply, name: string) => Number(reply.headers[name]);
const limitOf = (reply: Reply) => header(reply, RATE_LIMIT_HEADER.limit);
const remainingOf = (reply: Reply) => header(reply, RATE_LIMIT_HEADER.remaining);

async function burst(url: string, key: string, n: number): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < n; i++) replies.push(await call(url, '/pets?limit=1', { key }));
  return replies;
}

describe('minted tenant keys', () => {
  it("10,000 of them authenticate with their plan's limit, beside the demo keys; others 401", async () => {
    const seed = 'test-seed-1';
    const url = await start({ tenantKeys: { pro: 6000, business: 3997, free: 3 }, tenantSeed: seed });
    for (const [plan, n, limit] of [
      ['pro', 7, 300],
      ['pro', 6000, 300],
      ['business', 3997, 1000],
      ['free', 3, 60],
    ] as const) {
      const reply = await call(url, '/pets', { key: mintedKey(seed, plan, n) });
      expect(reply.status, `${plan} ${n}`).toBe(200);
      expect(limitOf(reply)).toBe(limit);
    }
    expect((await call(url, '/pets', { key: 'enterprise-demo-key' })).status).toBe(200);
    // Past the plan's count, a plan without minted keys, another seed's: unknown keys.
    for (const key of [
      mintedKey(seed, 'pro', 6001),
      mintedKey(seed, 'enterprise', 1),
      mintedKey('another-seed', 'pro', 7),
    ]) {
      const reply = await call(url, '/pets', { key });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: 'unauthorized' });
    }
  });

  it('come from the documented default seed when none is given, beside --keys', async () => {
    const url = await start({ keys: { 'given-key': 'free' }, tenantKeys: { business: 2 } });
    // The seed as the README documents it, not the implementation's constant: a changed default breaks this.
    const minted = await call(url, '/pets', { key: mintedKey('petstore-load-demo', 'business', 2) });
    expect(minted.status).toBe(200);
    expect(limitOf(minted)).toBe(1000);
    expect((await call(url, '/pets', { key: 'given-key' })).status).toBe(200);
    expect((await call(url, '/pets', { key: 'free-demo-key' })).status).toBe(401);
  });

  it.each<[string, ServerOptions, RegExp]>([
    ['an unknown plan', { tenantKeys: { gold: 3 } }, /^tenantKeys: unknown plan 'gold' \(known: free, /],
    ['no keys', { tenantKeys: { free: 0 } }, /^tenantKeys: free must be a whole number of keys >= 1$/],
    ['a fraction', { tenantKeys: { pro: 1.5 } }, /^tenantKeys: pro must be a whole number/],
    [
      'too many in all',
      { tenantKeys: { free: MAX_TENANT_KEYS, pro: 1 } },
      /^tenantKeys: more than 100,000 keys in all$/,
    ],
    ['an empty seed', { tenantKeys: { free: 1 }, tenantSeed: '' }, /^tenantSeed must be a non-empty string$/],
    [
      'sharedBucket without a limiter',
      { rateLimit: false, faults: { sharedBucket: true } },
      /^fault sharedBucket needs rate limiting/,
    ],
  ])('%s is refused in one line', (_, options, message) => {
    let error: unknown;
    try {
      validateServerOptions(options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});

/** Free at 5 per minute, the minute 10 s long; two keys of it (and no demo keys): a bucket of 10. */
const TWO_FREE_KEYS = {
  plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 5 } }),
  timeScale: 6,
  keys: { 'noisy-key': 'free', 'quiet-key': 'free' },
  banAfter: 2,
};

describe('sharedBucket fault', () => {
  it("a noisy key spends its plan's bucket; the quiet key is refused with its own quota left", async () => {
    const url = await start({ ...TWO_FREE_KEYS, faults: { sharedBucket: true } });
    const noisy = await burst(url, 'noisy-key', 10);
    // No key's own limit holds: all ten admitted, the headers telling the key's own count.
    expect(noisy.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(noisy.map(remainingOf)).toEqual([4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);

    const quiet = await call(url, '/pets?limit=1', { key: 'quiet-key' });
    expect(quiet.status).toBe(429);
    expect(quiet.body).toMatchObject({ code: 'rate_limited' });
    expect(limitOf(quiet)).toBe(5);
    expect(remainingOf(quiet)).toBe(5);
    expect(Number(quiet.headers[RATE_LIMIT_HEADER.retryAfter])).toBeGreaterThanOrEqual(1);

    // The ban stays per key: the noisy key, on past its 429, is banned; the quiet key is not.
    const after = await burst(url, 'noisy-key', 4);
    expect(after.map((r) => (r.body as { code?: string } | undefined)?.code)).toContain('temporarily_banned');
    const quietAgain = await call(url, '/pets?limit=1', { key: 'quiet-key' });
    expect(quietAgain.body).toMatchObject({ code: 'rate_limited' });
    // A client address keeps its own limit (the public document, without a key).
    expect((await call(url, '/openapi.yaml', { key: null })).status).toBe(200);
  });

  it('without it, the noisy key meets its own limit and the quiet key is served', async () => {
    const url = await start(TWO_FREE_KEYS);
    const noisy = await burst(url, 'noisy-key', 10);
    expect(noisy.map((r) => r.status)).toEqual([...Array(5).fill(200), ...Array(5).fill(429)]);
    expect(noisy[9]?.body).toMatchObject({ code: 'temporarily_banned' });
    const quiet = await call(url, '/pets?limit=1', { key: 'quiet-key' });
    expect(quiet.status).toBe(200);
    expect(remainingOf(quiet)).toBe(4);
  });

  it.each(['sliding', 'gcra'] as const)('under the %s limiter, the same', async (name) => {
    const plans = { free: { name: 'free', windows: [{ name: 'minute', limit: 5, seconds: 60 }] } };
    const free = plans.free as Plan;
    const limiter = new PlanLimiter(
      plans,
      undefined,
      0,
      undefined,
      { name, burst: name === 'gcra' ? 4 : undefined },
      {
        free: 2,
      },
    );
    const noisy = [];
    for (let i = 0; i < 10; i++) noisy.push(await limiter.admit('key:noisy', free));
    expect(noisy.map((d) => d.outcome)).toEqual(Array(10).fill('allowed'));
    expect(noisy.at(-1)?.remaining).toBe(0);
    const quiet = await limiter.admit('key:quiet', free);
    expect(quiet.outcome).toBe('rate_limited');
    expect(quiet.remaining).toBe(5);
    // Not pooled (a client address): its own limit only.
    expect((await limiter.admit('addr:127.0.0.1', free, false)).outcome).toBe('allowed');
  });
});
