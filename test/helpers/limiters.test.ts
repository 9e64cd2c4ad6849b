import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RateLimitView, readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { call, type Reply, sleep } from './http.ts';
import {
  type ExpressRateLimitOptions,
  type RunningLimiter,
  startExpressRateLimit,
  startFastifyRateLimit,
  startNginxLimitReq,
} from './limiters.ts';

/** A reply with the rate-limit view read at the moment it arrived, as the client reads it. */
interface Read {
  reply: Reply;
  view: RateLimitView;
}

let upstream: RunningServer;
beforeAll(async () => {
  // No limiter and no rate-limit headers of its own: whatever the replies say of quotas, the limiter said.
  upstream = await startServer({ rateLimit: false, seedData: 3 });
});
afterAll(async () => {
  await upstream?.close();
});

async function using<T>(start: () => Promise<RunningLimiter>, use: (url: string) => Promise<T>): Promise<T> {
  const limiter = await start();
  try {
    return await use(limiter.url);
  } finally {
    await limiter.stop();
  }
}

async function get(url: string, key = 'free-demo-key'): Promise<Read> {
  const reply = await call(url, '/pets', { key });
  return { reply, view: readRateLimit(reply.headers, Date.now()) };
}

/** Back to back, each request sent when the last one's reply is in. */
async function burst(url: string, count: number): Promise<Read[]> {
  const reads: Read[] = [];
  for (let i = 0; i < count; i++) reads.push(await get(url));
  return reads;
}

const statuses = (reads: Read[]) => reads.map((r) => r.reply.status);
const RATE_LIMIT_HEADER = /^(x-)?ratelimit/;

it('the upstream sends no rate-limit headers of its own', async () => {
  const { reply, view } = await get(upstream.url);
  expect(reply.status).toBe(200);
  expect(view.dialect).toBe('none');
  expect(Object.keys(reply.headers).filter((name) => RATE_LIMIT_HEADER.test(name))).toEqual([]);
});

describe('the limiters forward to the upstream', () => {
  const starters: [string, () => Promise<RunningLimiter>][] = [
    [
      '@fastify/rate-limit',
      () => startFastifyRateLimit({ upstream: upstream.url, max: 100, timeWindowMs: 10_000 }),
    ],
    [
      'express-rate-limit',
      () =>
        startExpressRateLimit({
          upstream: upstream.url,
          limit: 100,
          windowMs: 10_000,
          standardHeaders: 'draft-8',
          legacyHeaders: false,
        }),
    ],
    ['nginx limit_req', () => startNginxLimitReq({ upstream: upstream.url, rate: '100r/s', burst: 100 })],
  ];

  it.each(starters)(
    '%s: method, path and query, body, content type and key; stop closes it',
    async (_, start) => {
      const limiter = await start();
      try {
        const created = await call(limiter.url, '/pets', {
          method: 'POST',
          body: { name: 'Proxied', categoryId: 1 },
        });
        expect(created.status).toBe(201);
        expect(String(created.headers['content-type'])).toContain('application/json');
        expect(created.body).toMatchObject({ name: 'Proxied', categoryId: 1 });
        const page = await call(limiter.url, '/pets?limit=1');
        expect(page.status).toBe(200);
        expect(page.body).toHaveLength(1);
        // The key is the upstream's to judge: no key, no pets.
        expect((await call(limiter.url, '/pets', { key: null })).status).toBe(401);
      } finally {
        await limiter.stop();
      }
      await expect(request(`${limiter.url}/pets`)).rejects.toThrow();
    },
  );
});

describe('@fastify/rate-limit', () => {
  it('counts down in seconds-until, then 429 with Retry-After', () =>
    using(
      () => startFastifyRateLimit({ upstream: upstream.url, max: 5, timeWindowMs: 10_000 }),
      async (url) => {
        const reads = await burst(url, 6);
        expect(statuses(reads)).toEqual([200, 200, 200, 200, 200, 429]);
        for (const { view } of reads) {
          expect(view).toMatchObject({ dialect: 'seconds-until', alsoSent: [], limit: 5, malformed: [] });
          expect(view.resetSeconds).toBeGreaterThan(0);
          expect(view.resetSeconds).toBeLessThanOrEqual(10);
        }
        expect(reads.map((r) => r.view.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
        const retryAfter = Number(reads[5]?.reply.headers['retry-after']);
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(10);
        // Another key has a bucket of its own.
        expect((await get(url, 'pro-demo-key')).view.remaining).toBe(4);
      },
    ));
});

describe('express-rate-limit', () => {
  type Headers = Pick<ExpressRateLimitOptions, 'standardHeaders' | 'legacyHeaders'>;
  const ietf8Policy = [{ name: '5-in-10sec', quota: 5, windowSeconds: 10 }];
  const unnamedPolicy = [{ quota: 5, windowSeconds: 10 }];
  const cases: [string, Headers, Partial<RateLimitView>][] = [
    [
      'legacy only',
      { standardHeaders: false, legacyHeaders: true },
      { dialect: 'seed', alsoSent: [], policies: [] },
    ],
    [
      'draft-6 only',
      { standardHeaders: 'draft-6', legacyHeaders: false },
      { dialect: 'ietf-6', alsoSent: [], policies: unnamedPolicy },
    ],
    [
      'draft-7 only',
      { standardHeaders: 'draft-7', legacyHeaders: false },
      { dialect: 'ietf-7', alsoSent: [], policies: unnamedPolicy },
    ],
    [
      'draft-8 only',
      { standardHeaders: 'draft-8', legacyHeaders: false },
      { dialect: 'ietf-8', alsoSent: [], policies: ietf8Policy, policy: '5-in-10sec' },
    ],
    [
      'draft-8 and legacy',
      { standardHeaders: 'draft-8', legacyHeaders: true },
      { dialect: 'ietf-8', alsoSent: ['seed'], policies: ietf8Policy, policy: '5-in-10sec' },
    ],
  ];

  it.each(cases)('%s: read in its dialect, the 6th of 5 a 429 with Retry-After', (_, headers, expected) =>
    using(
      () => startExpressRateLimit({ upstream: upstream.url, limit: 5, windowMs: 10_000, ...headers }),
      async (url) => {
        const reads = await burst(url, 6);
        expect(statuses(reads)).toEqual([200, 200, 200, 200, 200, 429]);
        for (const { view } of reads) {
          expect(view).toMatchObject({ ...expected, limit: 5, malformed: [] });
          expect(view.resetSeconds).toBeGreaterThan(0);
          // The legacy Reset is a Unix time rounded up to the second: up to one more than the window.
          expect(view.resetSeconds).toBeLessThanOrEqual(11);
        }
        expect(reads.map((r) => r.view.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
        expect(Number(reads[5]?.reply.headers['retry-after'])).toBeGreaterThan(0);
        expect((await get(url, 'pro-demo-key')).view.remaining).toBe(4);
      },
    ),
  );
});

describe('nginx limit_req', () => {
  const silentOnQuota = ({ reply, view }: Read) => {
    expect(view.dialect).toBe('none');
    expect(Object.keys(reply.headers).filter((name) => RATE_LIMIT_HEADER.test(name))).toEqual([]);
    expect(reply.headers['retry-after']).toBeUndefined();
  };

  it('60r/m, no burst: the second request back to back is a bare 429; a second later one passes', () =>
    using(
      () => startNginxLimitReq({ upstream: upstream.url, rate: '60r/m' }),
      async (url) => {
        const reads = await burst(url, 2);
        expect(statuses(reads)).toEqual([200, 429]);
        for (const read of reads) silentOnQuota(read);
        await sleep(1050);
        expect((await get(url)).reply.status).toBe(200);
      },
    ));

  it('as it ships (no limit_req_status), keyed by the API key: the second request back to back is a bare 503', () =>
    using(
      () =>
        startNginxLimitReq({
          upstream: upstream.url,
          rate: '60r/m',
          zoneKey: '$http_authorization',
          status: 'nginx-default',
        }),
      async (url) => {
        const reads = await burst(url, 2);
        expect(statuses(reads)).toEqual([200, 503]);
        for (const read of reads) silentOnQuota(read);
        // Another key has a bucket of its own.
        expect((await get(url, 'pro-demo-key')).reply.status).toBe(200);
      },
    ));

  it('60r/m, burst=3 nodelay: four back to back pass, the fifth is a 429', () =>
    using(
      () => startNginxLimitReq({ upstream: upstream.url, rate: '60r/m', burst: 3, nodelay: true }),
      async (url) => {
        const reads = await burst(url, 5);
        expect(statuses(reads)).toEqual([200, 200, 200, 200, 429]);
        silentOnQuota(reads[4]!);
      },
    ));
});
