import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply, sleep } from './http.ts';
import type { RunningLimiter } from './limiters.ts';
import { startForbiddingRateLimit, startSlidingLog, startVarnishThrottle } from './more-limiters.ts';
import { childPids, processEnded } from './processes.ts';

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

/** All at once, each on a connection of its own: the limiter judges them side by side. */
const together = (url: string, count: number, key?: string) =>
  Promise.all(Array.from({ length: count }, () => get(url, key)));

const statuses = (replies: Reply[]) => replies.map((r) => r.status);
const sorted = (replies: Reply[]) => statuses(replies).sort((a, b) => a - b);
const times = (count: number, status: number) => Array<number>(count).fill(status);
const RATE_LIMIT_HEADER = /^(x-)?ratelimit/;

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

describe('rolling-rate-limiter, a sliding log', () => {
  it('10 per 10 s and 20 per 30 s: of 11 at once, 10 admitted and one 429 told the first one’s return', () =>
    using(
      () =>
        startSlidingLog({
          upstream: upstreamUrl,
          windows: [
            { limit: 10, windowMs: 10_000 },
            { limit: 20, windowMs: 30_000 },
          ],
        }),
      async ({ url }) => {
        const replies = await together(url, 11);
        expect(sorted(replies)).toEqual([...times(10, 200), 429]);
        const refusal = replies.find((r) => r.status === 429)!;
        expect(refusal.body).toEqual({ message: 'Too Many Requests' });
        // Under 10 s to wait, rounded up: 10 unless the 11 took a second to answer.
        expect(Number(refusal.headers['retry-after'])).toBeGreaterThanOrEqual(9);
        expect(Number(refusal.headers['retry-after'])).toBeLessThanOrEqual(10);
        for (const reply of replies)
          expect(Object.keys(reply.headers).filter((name) => RATE_LIMIT_HEADER.test(name))).toEqual([]);
        expect((await get(url, 'pro-demo-key')).status).toBe(200);
      },
    ));

  it('moving, not fixed, and refusals are not logged: a slot comes back one window after its request', () =>
    using(
      () => startSlidingLog({ upstream: upstreamUrl, windows: [{ limit: 10, windowMs: 2000 }] }),
      async ({ url }) => {
        expect(statuses(await burst(url, 5))).toEqual(times(5, 200));
        await sleep(1000);
        // Five more fill the window; the three past them are refused, and must not be counted.
        expect(statuses(await burst(url, 8))).toEqual([...times(5, 200), ...times(3, 429)]);
        // 2.2 s after the first five, under 2 s after the rest (0.8 s to spare): only the first
        // five's slots are back. A fixed 2 s window would have admitted all six; a log of refusals
        // too would have admitted two.
        await sleep(1200);
        const replies = await burst(url, 6);
        expect(statuses(replies)).toEqual([...times(5, 200), 429]);
        // The next slot returns 2 s after the second five: under 0.8 s from now.
        expect(replies[5]?.headers['retry-after']).toBe('1');
      },
    ));

  it('stacked: past the short window, the long one refuses and tells its own wait', () =>
    using(
      () =>
        startSlidingLog({
          upstream: upstreamUrl,
          windows: [
            { limit: 5, windowMs: 1000 },
            { limit: 8, windowMs: 3000 },
          ],
        }),
      async ({ url }) => {
        const first = await burst(url, 6);
        expect(statuses(first)).toEqual([...times(5, 200), 429]);
        expect(first[5]?.headers['retry-after']).toBe('1');
        await sleep(1100);
        // The short window has room again, the long one for three more (1.9 s to spare).
        const second = await burst(url, 4);
        expect(statuses(second)).toEqual([...times(3, 200), 429]);
        // The long window's oldest entry returns 3 s after it was logged: 1 to 1.9 s from now.
        expect(Number(second[3]?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(second[3]?.headers['retry-after'])).toBeLessThanOrEqual(2);
      },
    ));
});

describe('Varnish vsthrottle, a token bucket blocking a key at its first excess', () => {
  it('10 per 10 s blocking 30 s: of 11 at once, 10 admitted and one 429 with Retry-After 30; stop ends it', async () => {
    let pids: number[] = [];
    await using(
      () => startVarnishThrottle({ upstream: upstreamUrl, limit: 10, periodS: 10, blockS: 30 }),
      async ({ url, pid }) => {
        pids = [pid, ...childPids(pid)];
        const replies = await together(url, 11);
        expect(sorted(replies)).toEqual([...times(10, 200), 429]);
        const refusal = replies.find((r) => r.status === 429)!;
        expect(refusal.body).toEqual({ message: 'Too Many Requests' });
        expect(refusal.headers['retry-after']).toBe('30');
        for (const reply of replies)
          expect(Object.keys(reply.headers).filter((name) => RATE_LIMIT_HEADER.test(name))).toEqual([]);
        // Blocked: a request a moment later is refused too, its Retry-After counting down.
        const again = await get(url);
        expect(again.status).toBe(429);
        expect(Number(again.headers['retry-after'])).toBeLessThanOrEqual(30);
        expect((await get(url, 'pro-demo-key')).status).toBe(200);
      },
    );
    expect(pids.length).toBeGreaterThanOrEqual(2);
    for (const pid of pids) expect(processEnded(pid)).toBe(true);
  });

  it('refused while blocked though tokens came back, admitted once the block ends', () =>
    using(
      // A token every 0.2 s, a block of 1.5 s.
      () => startVarnishThrottle({ upstream: upstreamUrl, limit: 10, periodS: 2, blockS: 1.5, status: 403 }),
      async ({ url }) => {
        const replies = await together(url, 11);
        expect(sorted(replies)).toEqual([...times(10, 200), 403]);
        expect(replies.find((r) => r.status === 403)?.headers['retry-after']).toBe('2');
        // Two tokens back, yet the block holds (and spends one of them): 1 s to spare.
        await sleep(450);
        expect((await get(url)).status).toBe(403);
        // Past the block (at 1.5 s), with tokens back: admitted.
        await sleep(1200);
        expect(statuses(await burst(url, 2))).toEqual([200, 200]);
      },
    ));
});
