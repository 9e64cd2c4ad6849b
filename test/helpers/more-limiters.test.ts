import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply } from './http.ts';
import type { RunningLimiter } from './limiters.ts';
import { startForbiddingRateLimit } from './more-limiters.ts';

/** The upstream: 200 `{}` to everything, with no header of its own that a limiter could be credited with. */
let upstream: Server;
let upstreamUrl: string;
beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const address = upstream.address();
  if (typeof address !== 'object' || !address) throw new Error('the upstream is not listening');
  upstreamUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function using<L extends RunningLimiter, T>(
  start: () => Promise<L>,
  use: (limiter: L) => Promise<T>,
): Promise<T> {
  const limiter = await start();
  try {
    return await use(limiter);
  } finally {
    await limiter.stop();
  }
}

const get = (url: string, key = 'free-demo-key') => call(url, '/pets', { key });

/** Back to back, each request sent when the last one's reply is in. */
async function burst(url: string, count: number, key?: string): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) replies.push(await get(url, key));
  return replies;
}

const statuses = (replies: Reply[]) => replies.map((r) => r.status);
const times = (count: number, status: number) => Array<number>(count).fill(status);

describe('express-rate-limit refusing with 403 and the legacy headers', () => {
  it('10 in 10 s counting down, the 11th a 403 with Remaining 0, a Reset and no Retry-After', () =>
    using(
      () => startForbiddingRateLimit({ upstream: upstreamUrl, resource: 'core' }),
      async ({ url }) => {
        const sentAt = Date.now() / 1000;
        const replies = await burst(url, 11);
        expect(statuses(replies)).toEqual([...times(10, 200), 403]);
        expect(replies.map((r) => r.headers['x-ratelimit-remaining'])).toEqual([
          ...['9', '8', '7', '6', '5', '4', '3', '2', '1', '0'],
          '0',
        ]);
        const refusal = replies[10]!;
        expect(refusal.body).toEqual({ message: 'API rate limit exceeded' });
        expect(refusal.headers['retry-after']).toBeUndefined();
        expect(refusal.headers['x-ratelimit-limit']).toBe('10');
        // A Unix time in whole seconds, rounded up: the window's end, 10 s from the first request.
        const reset = Number(refusal.headers['x-ratelimit-reset']);
        expect(reset).toBeGreaterThanOrEqual(Math.floor(sentAt + 10));
        expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + 10));
        expect(replies.map((r) => r.headers['x-ratelimit-used'])).toEqual(
          Array.from({ length: 11 }, (_, i) => String(i + 1)),
        );
        expect(refusal.headers['x-ratelimit-resource']).toBe('core');
        for (const reply of replies) {
          expect(reply.headers.ratelimit).toBeUndefined();
          expect(reply.headers['ratelimit-policy']).toBeUndefined();
        }
        // Another key has a window of its own.
        expect((await get(url, 'pro-demo-key')).headers['x-ratelimit-remaining']).toBe('9');
      },
    ));
});
