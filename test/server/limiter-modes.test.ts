import { afterAll, describe, expect, it } from 'vitest';
import { LIMITER_MODELS, type LimiterModelName } from '../../src/api/limiter-models.ts';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { DIALECTS, readRateLimit } from '../../src/api/rate-limit-dialect.ts';
import { readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { type ServerOptions, startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { killAllClis, killCli, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { inSimulatedTime, serversClosedAfterEach } from '../helpers/simulated.ts';

/**
 * Each `--limiter` of the reference server, by its signature in counts of 200s and 429s, in
 * simulated time (the limiters read the clock the test moves): every wait is measured from a
 * response the test has seen, and every bound leaves the request latency out of the verdict. The
 * `serve` flags at the end run the real CLI.
 */

// No ban unless a test asks for one: these tests send requests after 429s on purpose.
const server = serversClosedAfterEach({ seedData: 3, banAfter: 1000 });

const perMinute = (limit: number, perDay = 1000): PlanTable =>
  applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: limit, perDay } });

async function burst(url: string, count: number): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) replies.push(await call(url, '/pets?limit=1'));
  return replies;
}

const statuses = (replies: Reply[]) => replies.map((r) => r.status);
const admitted = (replies: Reply[]) => replies.filter((r) => r.status === 200).length;
const remaining = (replies: Reply[]) => replies.map((r) => readRateLimitHeaders(r.headers).remaining);
const retryAfter = (reply: Reply) => Number(reply.headers['retry-after']);

/** Sleeps until `at` (a Date.now() reading). */
const until = (at: number) => sleep(Math.max(0, at - Date.now()));

describe('fixed (the default)', () => {
  it('admits L, then 429 until the window resets, then L again', () =>
    inSimulatedTime(async () => {
      // 5 per 2 s window.
      const s = await server({ timeScale: 30, plans: perMinute(5) });
      const first = await burst(s.url, 7);
      expect(statuses(first)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(remaining(first)).toEqual([4, 3, 2, 1, 0, 0, 0]);
      await sleep(700);
      expect((await call(s.url, '/pets?limit=1')).status).toBe(429);
      // Retry-After is whole seconds rounded up: past the window's end, never before.
      await sleep(retryAfter(first[6] as Reply) * 1000);
      expect(statuses(await burst(s.url, 6))).toEqual([200, 200, 200, 200, 200, 429]);
    }));
});

describe('sliding (a sliding log)', () => {
  it('admits L in any span of W: requests come back one by one as they age out, not all at a reset', () =>
    inSimulatedTime(async () => {
      // 6 per 2 s window.
      const W = 2000;
      const s = await server({ timeScale: 30, plans: perMinute(6), limiter: 'sliding' });
      const early = await burst(s.url, 3);
      const earlyDone = Date.now();
      expect(statuses(early)).toEqual([200, 200, 200]);
      expect(remaining(early)).toEqual([5, 4, 3]);

      // Half a window later: three more fill the span, the next is refused.
      await sleep(W / 2);
      const lateStart = Date.now();
      const late = await burst(s.url, 4);
      expect(statuses(late)).toEqual([200, 200, 200, 429]);
      expect(remaining(late)).toEqual([2, 1, 0, 0]);

      // A window after the early three: they have aged out, the late three still count. A fixed window
      // would have reset and admitted six.
      await until(earlyDone + W + 100);
      expect(Date.now()).toBeLessThan(lateStart + W);
      const after = await burst(s.url, 4);
      expect(statuses(after)).toEqual([200, 200, 200, 429]);
      expect(remaining(after)).toEqual([2, 1, 0, 0]);
      // Reset: when the newest request ages out and the whole quota is back, within a window.
      const reset = readRateLimitHeaders((after[2] as Reply).headers).reset as number;
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + W / 1000));
    }));
});

describe('token-bucket', () => {
  it('a bucket of B admits B at once, then about one request per T = W/L', () =>
    inSimulatedTime(async () => {
      // 10 per 5 s window: T = 500 ms; a bucket of 4.
      const T = 500;
      const s = await server({ timeScale: 12, plans: perMinute(10), limiter: 'token-bucket', burst: 4 });
      const start = Date.now();
      const first = await burst(s.url, 6);
      // A token every T: a burst slower than T (a very busy machine) may earn one more.
      const refills = Math.floor((Date.now() - start) / T);
      expect(statuses(first).slice(0, 4)).toEqual([200, 200, 200, 200]);
      expect(remaining(first).slice(0, 4)).toEqual([3, 2, 1, 0]);
      expect(admitted(first)).toBeLessThanOrEqual(4 + refills);
      // The next token is less than T away.
      expect(retryAfter(first.findLast((r) => r.status === 429) as Reply)).toBe(1);

      // Asking every T/5 for 5 T: the bucket, nearly empty, gives about one per T.
      const pollStart = Date.now();
      const polled: Reply[] = [];
      while (Date.now() - pollStart < 5 * T) {
        polled.push(await call(s.url, '/pets?limit=1'));
        await sleep(T / 5);
      }
      const elapsed = (Date.now() - pollStart) / T;
      expect(admitted(polled)).toBeGreaterThanOrEqual(Math.floor(elapsed) - 1);
      expect(admitted(polled)).toBeLessThanOrEqual(Math.floor(elapsed) + 1);
    }));
});

describe('gcra (nginx limit_req)', () => {
  it('burst 0: a second request at once is refused, one T after the first is admitted', () =>
    inSimulatedTime(async () => {
      // 10 per 5 s window: T = 500 ms.
      const T = 500;
      const s = await server({ timeScale: 12, plans: perMinute(10), limiter: 'gcra' });
      const first = await burst(s.url, 5);
      const firstDone = Date.now();
      expect(statuses(first)).toEqual([200, 429, 429, 429, 429]);
      expect(readRateLimitHeaders((first[0] as Reply).headers)).toMatchObject({ limit: 10, remaining: 0 });
      expect(retryAfter(first[1] as Reply)).toBe(1);
      // The refused requests did not count: one T after the admitted one, the next is admitted.
      await until(firstDone + T + 50);
      expect(statuses(await burst(s.url, 2))).toEqual([200, 429]);
    }));

  it('burst N: N + 1 at once, then Remaining counts the headroom back', () =>
    inSimulatedTime(async () => {
      const T = 500;
      const s = await server({ timeScale: 12, plans: perMinute(10), limiter: 'gcra', burst: 3 });
      const first = await burst(s.url, 6);
      const firstDone = Date.now();
      expect(statuses(first)).toEqual([200, 200, 200, 200, 429, 429]);
      expect(remaining(first)).toEqual([3, 2, 1, 0, 0, 0]);
      // Two T later two have drained: two admitted at once, not four.
      await until(firstDone + 2 * T + 50);
      const second = await burst(s.url, 3);
      expect(admitted(second)).toBeGreaterThanOrEqual(2);
      expect(statuses(second).slice(0, 2)).toEqual([200, 200]);
      expect(admitted(second)).toBeLessThanOrEqual(3);
    }));

  it('keeps the day a fixed quota: the model applies to the shortest window only', () =>
    inSimulatedTime(async () => {
      const s = await server({ timeScale: 60, plans: perMinute(10, 3), limiter: 'gcra', burst: 5 });
      const replies = await burst(s.url, 4);
      expect(statuses(replies)).toEqual([200, 200, 200, 429]);
      expect(readRateLimitHeaders((replies[2] as Reply).headers)).toMatchObject({ limit: 3, remaining: 0 });
      // The day lasts 1440 s at time scale 60: the retry is a day away.
      expect(retryAfter(replies[3] as Reply)).toBeGreaterThan(1400);
    }));

  it('still bans a key that keeps sending inside Retry-After', () =>
    inSimulatedTime(async () => {
      const s = await server({ timeScale: 12, plans: perMinute(10), limiter: 'gcra', banAfter: 2 });
      const replies = await burst(s.url, 5);
      expect(replies.map((r) => (r.body as { code?: string }).code ?? r.status)).toEqual([
        200,
        'rate_limited',
        'rate_limited',
        'rate_limited',
        'temporarily_banned',
      ]);
    }));
});

describe('every limiter in every header dialect', () => {
  // 2 per minute, unscaled: nothing here depends on time. gcra (burst 0) spaces them 30 s apart.
  const expected = (limiter: LimiterModelName) => (limiter === 'gcra' ? [200, 429, 429] : [200, 200, 429]);
  const cases = LIMITER_MODELS.flatMap((limiter) =>
    [...DIALECTS, 'none' as const].map((dialect) => [limiter, dialect] as const),
  );

  it.each(cases)('%s, %s: the quota told and Retry-After on the 429', async (limiter, headerDialect) => {
    const s = await server({ plans: perMinute(2), limiter, headerDialect });
    const replies = await burst(s.url, 3);
    expect(statuses(replies)).toEqual(expected(limiter));
    const refused = replies[2] as Reply;
    expect(retryAfter(refused)).toBeGreaterThanOrEqual(1);
    expect(retryAfter(refused)).toBeLessThanOrEqual(60);
    const view = readRateLimit(refused.headers, Date.now());
    expect(view.dialect).toBe(headerDialect);
    if (headerDialect === 'none') return;
    expect(view).toMatchObject({ limit: 2, remaining: 0 });
    expect(view.resetSeconds).toBeGreaterThan(0);
    // A sliding counter's quota is whole once the period after the newest request's has passed.
    expect(view.resetSeconds).toBeLessThanOrEqual(limiter === 'sliding-counter' ? 121 : 61);
  });
});

describe('a bucket larger than the window', () => {
  it('is told as its size, so that Remaining never exceeds Limit, and keeps its policy name', () =>
    inSimulatedTime(async () => {
      const s = await server({
        plans: perMinute(2),
        limiter: 'token-bucket',
        burst: 4,
        headerDialect: 'ietf-8',
      });
      const replies = await burst(s.url, 5);
      expect(statuses(replies)).toEqual([200, 200, 200, 200, 429]);
      const view = readRateLimit((replies[0] as Reply).headers, Date.now());
      expect(view).toMatchObject({ policy: 'minute', remaining: 3 });
      const seed = await server({ plans: perMinute(2), limiter: 'token-bucket', burst: 4 });
      expect(readRateLimitHeaders((await call(seed.url, '/pets?limit=1')).headers)).toMatchObject({
        limit: 4,
        remaining: 3,
      });
    }));
});

describe('the limiter-leak fault', () => {
  it.each(['sliding', 'token-bucket'] as const)(
    '%s: lets N more through than Limit tells',
    async (limiter) => {
      const s = await server({ plans: perMinute(3), limiter, faults: { limiterLeak: 2 } });
      const replies = await burst(s.url, 6);
      expect(statuses(replies)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(readRateLimitHeaders((replies[0] as Reply).headers)).toMatchObject({ limit: 3, remaining: 2 });
      expect(remaining(replies).slice(2, 5)).toEqual([0, 0, 0]);
    },
  );
});

describe('options the server refuses', () => {
  it.each([
    [{ burst: 3 }, /burst applies to the token-bucket and gcra limiters only, not to fixed/],
    [{ limiter: 'sliding', burst: 3 }, /burst .*not to sliding/],
    [{ limiter: 'token-bucket', burst: 0 }, /burst must be a whole number >= 1/],
    [{ limiter: 'gcra', burst: 1.5 }, /burst must be a whole number >= 0/],
    [
      { limiter: 'leaky' as string as LimiterModelName },
      /limiter must be one of fixed, sliding, sliding-counter, token-bucket, gcra/,
    ],
    [{ limiter: 'gcra', quotaStore: 'redis://127.0.0.1:1' }, /limiter gcra .*quotaStore/],
  ] as [ServerOptions, RegExp][])('%o', async (options, message) => {
    await expect(startServer(options)).rejects.toThrow(message);
  });
});

describe('petstore-load serve --limiter --burst', () => {
  afterAll(killAllClis);

  async function runToExit(args: string[]) {
    const cli = spawnCli(args);
    try {
      const { code } = await withTimeout(cli.exited, 15_000, `petstore-load ${args.join(' ')}`);
      return { code, stdout: cli.stdout(), stderr: cli.stderr() };
    } finally {
      killCli(cli);
    }
  }

  it('--help explains both flags', async () => {
    const { code, stdout } = await runToExit(['serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--limiter[\s\S]*sliding[\s\S]*token-bucket[\s\S]*gcra/);
    expect(stdout).toMatch(/--burst[\s\S]*bucket's size/);
  });

  it.each([
    [
      ['--burst', '3'],
      /^petstore-load: --burst applies to the token-bucket and gcra limiters only, not to fixed$/,
    ],
    [
      ['--limiter', 'gcra', '--quota-store', 'redis://127.0.0.1:1'],
      /^petstore-load: --limiter gcra keeps its state in memory: only fixed works with --quota-store$/,
    ],
  ])('serve %j: one line, exit code 2', async (flags, message) => {
    const { code, stdout, stderr } = await cliInProcess(['serve', '--port', '0', ...flags]);
    expect(stderr.trim()).toMatch(message);
    expect(stdout).not.toContain('listening on');
    expect(code).toBe(2);
  });
});
