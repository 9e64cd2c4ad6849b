import { describe, expect, it } from 'vitest';
import { isErrorObject } from '../../src/api/error-object.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';
import { readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../src/api/retry-after.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { inSimulatedTime, type SimulatedServer, serversClosedAfterEach } from '../helpers/simulated.ts';

/**
 * The reference server's limiter, probed over its windows: in simulated time, the server answering
 * in process (test/helpers/simulated.ts). Its limiter reads the faked `Date.now()`, so a window
 * waited out costs nothing, and a burst always lands in one window.
 */

/** Each answer takes a loopback's millisecond, as over a socket. */
const LOOPBACK_MS = 1;

const server = serversClosedAfterEach({ seedData: 3 }, LOOPBACK_MS);

function limits(reply: Reply) {
  return readRateLimitHeaders(reply.headers);
}

/** Waits out a 429 as a careful client would: its Retry-After, plus a little for clock granularity. */
async function honour(reply: Reply): Promise<void> {
  const retryAfter = parseRetryAfter(reply.headers['retry-after']);
  if (!retryAfter) throw new Error('429 without Retry-After');
  await sleep(retryAfterDelayMs(retryAfter, Date.now()) + 50);
}

async function burst(s: SimulatedServer, count: number, key = 'free-demo-key'): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) replies.push(await call(s.url, '/pets?limit=1', { key }));
  return replies;
}

describe('plan quotas', () => {
  it('admits exactly the plan limit in one window, then 429 with Retry-After and a consistent Reset', async () => {
    // Free: 60 per minute; time scale 20 makes the minute 3 s, ample for 61 requests on loopback.
    const s = await server({ timeScale: 20 });
    await inSimulatedTime(async () => {
      const replies = await burst(s, 61);
      const accepted = replies.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(60);
      expect(accepted.map((r) => limits(r).remaining)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
      expect(new Set(accepted.map((r) => limits(r).limit))).toEqual(new Set([60]));
      // Fixed window: Reset does not move while the window lasts.
      expect(new Set(accepted.map((r) => limits(r).reset)).size).toBe(1);

      const rejected = replies[60] as Reply;
      const nowSeconds = Date.now() / 1000;
      expect(rejected.status).toBe(429);
      expect(rejected.body).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(isErrorObject(rejected.body)).toBe(true);
      const { limit, remaining, reset } = limits(rejected);
      expect([limit, remaining]).toEqual([60, 0]);
      expect(rejected.headers['retry-after']).toMatch(/^\d+$/);
      const retryAfter = Number(rejected.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3);
      // Reset is a Unix time within one (scaled) window of now, and agrees with Retry-After to the second.
      expect(reset).toBeGreaterThanOrEqual(Math.floor(nowSeconds));
      expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 3);
      expect(Math.abs((reset as number) - (Math.floor(nowSeconds) + retryAfter))).toBeLessThanOrEqual(1);
      expect(reset).toBe(limits(accepted[0] as Reply).reset);
    });
  });

  it('gives the whole quota back after the reset (rejected requests did not count)', async () => {
    const s = await server({
      timeScale: 60,
      plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 10 } }),
    });
    await inSimulatedTime(async () => {
      const first = await burst(s, 12);
      expect(first.map((r) => r.status)).toEqual([...Array(10).fill(200), 429, 429]);
      await honour(first[11] as Reply);
      const second = await burst(s, 11);
      expect(second.map((r) => r.status)).toEqual([...Array(10).fill(200), 429]);
      expect(limits(second[0] as Reply).remaining).toBe(9);
    });
  });

  it('enforces the daily limit, and the headers then describe the day', async () => {
    const s = await server({
      timeScale: 60,
      plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 10, perDay: 25 } }),
    });
    await inSimulatedTime(async () => {
      let statuses: number[] = [];
      for (let window = 0; window < 3; window++) {
        const replies = await burst(s, 11);
        statuses = statuses.concat(replies.map((r) => r.status));
        const last = replies[replies.length - 1] as Reply;
        if (window < 2) {
          expect(limits(last)).toMatchObject({ limit: 10, remaining: 0 });
          await honour(last);
        } else {
          // Third window: 5 left of the day, so the day is the limit closest to running out.
          const fifth = replies[4] as Reply;
          expect(limits(fifth)).toMatchObject({ limit: 25, remaining: 0 });
          expect(limits(replies[0] as Reply)).toMatchObject({ limit: 25, remaining: 4 });
          expect(last.status).toBe(429);
          expect(limits(last)).toMatchObject({ limit: 25, remaining: 0 });
          // The day lasts 1440 s at time scale 60: the retry is a day away, not a minute.
          expect(Number(last.headers['retry-after'])).toBeGreaterThan(1400);
          expect(Number(last.headers['retry-after'])).toBeLessThanOrEqual(1440);
        }
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    });
  });

  it('limits requests without a valid key per client address, with headers on the 401s', async () => {
    const s = await server({
      timeScale: 20,
      plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 4 } }),
    });
    await inSimulatedTime(async () => {
      const replies: Reply[] = [];
      for (let i = 0; i < 5; i++)
        replies.push(await call(s.url, '/pets', { key: i % 2 ? null : 'wrong-key' }));
      expect(replies.map((r) => r.status)).toEqual([401, 401, 401, 401, 429]);
      expect(replies.map((r) => limits(r).remaining)).toEqual([3, 2, 1, 0, 0]);
      // The address's quota is its own: a valid key is not affected.
      expect((await call(s.url, '/pets')).status).toBe(200);
    });
  });

  it('can be switched off, and then sends no rate-limit headers', async () => {
    const s = await server({
      rateLimit: false,
      plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 2 } }),
    });
    await inSimulatedTime(async () => {
      const replies = await burst(s, 5);
      expect(replies.map((r) => r.status)).toEqual(Array(5).fill(200));
      expect(replies[0]?.headers['x-ratelimit-limit']).toBeUndefined();
    });
  });
});

describe('temporary ban', () => {
  const plans = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 3 } });

  it('bans the key on the 6th request after a 429, with Retry-After equal to the remaining ban', async () => {
    // Minute = 2 s, ban = 90 s / 30 = 3 s.
    const s = await server({ timeScale: 30, plans, banDurationMs: 90_000 });
    await inSimulatedTime(async () => {
      const replies = await burst(s, 10);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, ...Array(7).fill(429)]);
      expect(replies.slice(3, 9).map((r) => (r.body as { code: string }).code)).toEqual(
        Array(6).fill('rate_limited'),
      );
      const banned = replies[9] as Reply;
      expect(banned.body).toMatchObject({ code: 'temporarily_banned', status: 429 });
      expect(Number(banned.headers['retry-after'])).toBe(3);
      expect(limits(banned).remaining).toBe(0);
      expect(limits(banned).reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 2);

      // Other keys are not affected; the banned key stays banned past its window's reset.
      expect((await call(s.url, '/pets', { key: 'pro-demo-key' })).status).toBe(200);
      await sleep(2100);
      expect((await call(s.url, '/pets')).body).toMatchObject({ code: 'temporarily_banned' });
      await honour(banned);
      expect((await call(s.url, '/pets')).status).toBe(200);
    });
  });

  it('never bans a client that waits for Retry-After after each 429', async () => {
    const s = await server({ timeScale: 60, plans });
    await inSimulatedTime(async () => {
      for (let period = 0; period < 4; period++) {
        const replies = await burst(s, 4);
        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
        expect((replies[3] as Reply).body).toMatchObject({ code: 'rate_limited' });
        await honour(replies[3] as Reply);
      }
    });
  });

  it('counts strikes per limited period: five extra requests in each of two periods do not ban', async () => {
    const s = await server({ timeScale: 60, plans });
    await inSimulatedTime(async () => {
      for (let period = 0; period < 2; period++) {
        const replies = await burst(s, 9);
        expect(replies.map((r) => (r.body as { code?: string }).code ?? r.status)).toEqual([
          200,
          200,
          200,
          ...Array(6).fill('rate_limited'),
        ]);
        await honour(replies[8] as Reply);
      }
    });
  });
});
