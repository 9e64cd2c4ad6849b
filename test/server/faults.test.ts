import { afterAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, type Plan } from '../../src/api/plans.ts';
import { RATE_LIMIT_HEADER } from '../../src/api/rate-limit-headers.ts';
import { FAULT_NAMES, FaultInjector, type FaultOptions, OMITTABLE_HEADERS } from '../../src/server/faults.ts';
import { type RunningServer, type ServerOptions, startServer } from '../../src/server/index.ts';
import type { LimitDecision } from '../../src/server/rate-limiter.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';

/**
 * Every fault of FaultOptions, observed from the outside on a real listening server: present when
 * switched on, absent when off. Timing margins are generous (a loaded 2-core CI machine), and each
 * "on" assertion is paired with an "off" one so that a fault that does nothing, or leaks into the
 * normal server, is caught.
 */

/** 6000 per (unscaled) minute: plenty for the timing tests, which must never meet a 429. */
const BIG_KEY = 'enterprise-demo-key';
const HEADERS = [RATE_LIMIT_HEADER.limit, RATE_LIMIT_HEADER.remaining, RATE_LIMIT_HEADER.reset] as const;
/** Free plan of 5 per minute (and 1000 per day), for the tests that exhaust a window. */
const SMALL_PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 5, perDay: 1000 } });
/** With the small plans: a minute window lasts 10 s, far longer than any burst of the tests. */
const SMALL_TIME_SCALE = 6;

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function start(faults: FaultOptions | undefined, options: ServerOptions = {}): Promise<string> {
  const server = await startServer({ ...options, faults, seedData: 5 });
  servers.push(server);
  return server.url;
}

/** A server started on first use and shared by the tests that call this. */
function shared(faults: FaultOptions | undefined, options: ServerOptions = {}): () => Promise<string> {
  let url: Promise<string> | undefined;
  return () => {
    url ??= start(faults, options);
    return url;
  };
}

/**
 * The server without faults that the "off" tests share (server starts cost ~0.3 s each). Each test
 * that asserts on the rate-limit state uses a key of its own: free-demo-key for wrongRemaining,
 * pro-demo-key for resetAsDelta, no key (the client address) for omitHeader; the enterprise key is
 * for the timing tests, which never look at its quota.
 */
const plain = shared(undefined);
/** Small plans without faults, with one key per test that exhausts a window. */
const smallPlain = shared(undefined, {
  plans: SMALL_PLANS,
  timeScale: SMALL_TIME_SCALE,
  keys: { 'retry-after-key': 'free', 'leak-key': 'free', 'headers-429-key': 'free' },
});

function int(reply: Reply, name: string): number {
  const value = reply.headers[name];
  expect(typeof value, `header ${name}`).toBe('string');
  expect(value, `header ${name}`).toMatch(/^\d+$/);
  return Number(value);
}

/** Response time of one request, in ms, measured by the client. */
async function timed(url: string): Promise<number> {
  const started = performance.now();
  const reply = await call(url, '/pets', { key: BIG_KEY });
  const elapsed = performance.now() - started;
  expect(reply.status).toBe(200);
  return elapsed;
}

async function sequentialTimes(url: string, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await timed(url));
  return times;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/** Max minus min, leaving out the two slowest: one scheduling hiccup on a busy machine is not a spread. */
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[sorted.length - 3] as number) - (sorted[0] as number);
};

/** Outcome of one request: its status, or the code of the error undici threw. */
async function outcome(url: string): Promise<number | string> {
  try {
    return (await call(url, '/pets', { key: BIG_KEY })).status;
  } catch (error) {
    const e = error as { code?: string; cause?: { code?: string } };
    return e.code ?? e.cause?.code ?? String(error);
  }
}

describe('no faults', () => {
  it('the injector is inactive without faults, and with faults switched off explicitly', () => {
    expect(new FaultInjector({}).active).toBe(false);
    expect(new FaultInjector().active).toBe(false);
    // A seed alone injects nothing, nor do zero rates and false flags.
    expect(new FaultInjector({ seed: 3 }).active).toBe(false);
    expect(
      new FaultInjector({
        latencyMs: 0,
        errorRate: 0,
        resetRate: 0,
        resetAsDelta: false,
        noRetryAfter: false,
      }).active,
    ).toBe(false);
  });

  it.each(FAULT_NAMES)('the injector is active with %s alone', (name) => {
    const values: Required<Omit<FaultOptions, 'seed'>> = {
      latencyMs: 10,
      jitterMs: 10,
      stall: { everyMs: 1000, forMs: 100 },
      errorRate: 0.1,
      resetRate: 0.1,
      omitHeader: RATE_LIMIT_HEADER.reset,
      wrongRemaining: 1,
      resetAsDelta: true,
      noRetryAfter: true,
      limiterLeak: 1,
      remainingRises: true,
      resetDrift: true,
      wrongWindowHeaders: true,
      early429: true,
      retryAfterMismatch: 3,
      rejectRetry: true,
      cacheable429: true,
      noSunsetLink: true,
      wrongLimit: true,
      errorBodyStatus: true,
      xJsonContentType: true,
      badDeprecation: true,
      schemaViolation: true,
      dayRetryAsMinute: true,
      sharedBucket: true,
    };
    expect(new FaultInjector({ [name]: values[name] }).active).toBe(true);
  });

  it('a burst against a server without faults is all 2xx with the three rate-limit headers', async () => {
    const url = await plain();
    const replies = await Promise.all(Array.from({ length: 20 }, () => call(url, '/pets', { key: BIG_KEY })));
    for (const reply of replies) {
      expect(reply.status).toBeGreaterThanOrEqual(200);
      expect(reply.status).toBeLessThan(300);
      for (const name of HEADERS) expect(reply.headers[name], name).toMatch(/^\d+$/);
      expect(int(reply, RATE_LIMIT_HEADER.remaining)).toBeLessThanOrEqual(
        int(reply, RATE_LIMIT_HEADER.limit),
      );
    }
  });
});

describe('latencyMs', () => {
  it('adds the latency to every response', async () => {
    const url = await start({ latencyMs: 60 });
    const times = await sequentialTimes(url, 5);
    // A timer fires on the loop's cached clock, up to its 1 ms granularity early, and no more.
    for (const t of times) expect(t).toBeGreaterThanOrEqual(60 - 1);
  });

  it('without it, responses are well under that', async () => {
    const url = await plain();
    await timed(url); // the first one opens the connection
    const times = await sequentialTimes(url, 5);
    expect(median(times)).toBeLessThan(30);
  });
});

describe('jitterMs', () => {
  const JITTER = 300;

  it('spreads response times over [0, jitterMs), repeatably with a seed', async () => {
    // Two servers with the same seed draw the same delays, in the same order. Both are started, and
    // sent one request each (the first draw, on a cold server), before the measured ones.
    const urls = [await start({ jitterMs: JITTER, seed: 42 }), await start({ jitterMs: JITTER, seed: 42 })];
    await Promise.all(urls.map(timed));
    const [a, b] = (await Promise.all(urls.map((url) => sequentialTimes(url, 10)))) as [number[], number[]];
    expect(spread(a)).toBeGreaterThanOrEqual(JITTER / 4);
    expect(Math.max(...a, ...b)).toBeLessThan(JITTER + 200);
    // Independent draws would differ by ~JITTER * 0.29 at the median; a shared seed, by the noise.
    const differences = a.map((t, i) => Math.abs(t - (b[i] as number)));
    expect(median(differences)).toBeLessThan(30);
  });

  it('without it, response times are narrow', async () => {
    const url = await plain();
    await timed(url);
    const times = await sequentialTimes(url, 10);
    expect(spread(times)).toBeLessThan(JITTER / 3);
  });
});

describe('stall', () => {
  const STALL = { everyMs: 1000, forMs: 400 };

  /**
   * 25 requests at random moments over ~2 s (one in each 80 ms slot, so that every part of the stall
   * period is hit): when each was sent and when it finished, in ms.
   */
  async function spreadRequests(url: string) {
    await timed(url).catch(() => undefined); // open a connection (it may itself be stalled)
    return Promise.all(
      Array.from({ length: 25 }, async (_, i) => {
        await sleep(i * 80 + Math.random() * 80);
        const sent = performance.now();
        const reply = await call(url, '/pets', { key: BIG_KEY });
        const done = performance.now();
        expect(reply.status).toBe(200);
        return { wait: done - sent, done };
      }),
    );
  }

  it('requests arriving during a stall wait until it ends, the longest close to forMs; none without', async () => {
    // On and off side by side, to halve the time.
    const [results, withoutStall] = await Promise.all([
      start({ stall: STALL }).then(spreadRequests),
      plain().then(spreadRequests),
    ]);
    const stalled = results.filter((r) => r.wait >= 150);
    const quick = results.filter((r) => r.wait < 100);
    // ~25% of the moments fall in the first 250 ms of a stall (a wait of 150 ms or more); ~60% outside.
    expect(stalled.length).toBeGreaterThanOrEqual(3);
    expect(quick.length).toBeGreaterThanOrEqual(5);
    const longest = Math.max(...results.map((r) => r.wait));
    expect(longest).toBeGreaterThanOrEqual(STALL.forMs * 0.6);
    expect(longest).toBeLessThan(STALL.forMs + 300);
    // They all end together with the stall: their ends are whole periods apart.
    const first = stalled[0]?.done as number;
    for (const r of stalled) {
      const offset = (((r.done - first) % STALL.everyMs) + STALL.everyMs) % STALL.everyMs;
      expect(Math.min(offset, STALL.everyMs - offset)).toBeLessThan(100);
    }
    expect(withoutStall.map((r) => r.wait).filter((wait) => wait >= 250)).toEqual([]);
  });
});

/** Both rates switched off explicitly (rather than left out). */
const zeroRates = shared({ errorRate: 0, resetRate: 0, seed: 1 });

describe('errorRate', () => {
  it('answers a share of requests 500 with an Error body, still with the rate-limit headers', async () => {
    const run = async () => {
      const url = await start({ errorRate: 0.5, seed: 7 });
      const replies: Reply[] = [];
      for (let i = 0; i < 40; i++) replies.push(await call(url, '/pets', { key: BIG_KEY }));
      return replies;
    };
    const [replies, again] = await Promise.all([run(), run()]);
    const failed = replies.filter((r) => r.status === 500);
    expect(failed.length).toBeGreaterThanOrEqual(8);
    expect(failed.length).toBeLessThanOrEqual(32);
    expect(replies.filter((r) => r.status === 200).length).toBe(40 - failed.length);
    for (const reply of failed) {
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(reply.body).toEqual({ code: 'internal_error', status: 500, message: expect.any(String) });
      for (const name of HEADERS) expect(reply.headers[name], name).toMatch(/^\d+$/);
    }
    // The seed makes the run repeatable.
    expect(again.map((r) => r.status)).toEqual(replies.map((r) => r.status));
  });

  it('with errorRate 0, no request fails', async () => {
    const url = await zeroRates();
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await call(url, '/pets', { key: BIG_KEY })).status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});

describe('resetRate', () => {
  const CONNECTION_ERRORS = ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'ECONNREFUSED'];

  it('resets the connection of a share of requests', async () => {
    const url = await start({ resetRate: 0.5, seed: 11 });
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 30; i++) outcomes.push(await outcome(url));
    const errors = outcomes.filter((o) => typeof o === 'string');
    expect(errors.length).toBeGreaterThanOrEqual(5);
    for (const code of errors) expect(CONNECTION_ERRORS).toContain(code);
    expect(outcomes.filter((o) => o === 200).length).toBe(30 - errors.length);
    expect(outcomes.filter((o) => o === 200).length).toBeGreaterThanOrEqual(5);
  });

  it('with resetRate 0, every request is answered', async () => {
    const url = await zeroRates();
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 50; i++) outcomes.push(await outcome(url));
    expect(outcomes.filter((o) => o !== 200)).toEqual([]);
  });
});

describe('omitHeader', () => {
  it.each(OMITTABLE_HEADERS)('leaves %s out of every response, and only it', async (omitted) => {
    const url = await start({ omitHeader: omitted });
    // An accepted request and a rejected one (no key): both carry rate-limit headers normally.
    const replies = [
      await call(url, '/pets', { key: BIG_KEY }),
      await call(url, '/pets', { key: null }),
      await call(url, '/pets', { key: BIG_KEY }),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 401, 200]);
    for (const reply of replies) {
      expect(reply.headers[omitted]).toBeUndefined();
      for (const name of HEADERS.filter((h) => h !== omitted))
        expect(reply.headers[name], name).toMatch(/^\d+$/);
    }
  });

  it('without it, all three are present', async () => {
    const url = await plain();
    const reply = await call(url, '/pets', { key: null });
    expect(reply.status).toBe(401);
    for (const name of HEADERS) expect(reply.headers[name], name).toMatch(/^\d+$/);
  });
});

describe('wrongRemaining', () => {
  it('adds N to Remaining: the first response of a window shows more left than the limit', async () => {
    const url = await start({ wrongRemaining: 10 });
    const reply = await call(url, '/pets');
    expect(reply.status).toBe(200);
    const limit = int(reply, RATE_LIMIT_HEADER.limit);
    expect(limit).toBe(60);
    expect(int(reply, RATE_LIMIT_HEADER.remaining)).toBe(limit - 1 + 10);
    expect(int(reply, RATE_LIMIT_HEADER.remaining)).toBeGreaterThan(limit);
  });

  it('without it, Remaining stays within Limit and drops by one per request', async () => {
    const url = await plain();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await call(url, '/pets');
      expect(reply.status).toBe(200);
      const value = int(reply, RATE_LIMIT_HEADER.remaining);
      expect(value).toBeLessThanOrEqual(int(reply, RATE_LIMIT_HEADER.limit));
      remaining.push(value);
    }
    expect(remaining).toEqual([59, 58, 57, 56, 55]);
  });
});

describe('resetAsDelta', () => {
  it('sends Reset as a small number of seconds, not a Unix time', async () => {
    const url = await start({ resetAsDelta: true });
    const reply = await call(url, '/pets');
    const reset = int(reply, RATE_LIMIT_HEADER.reset);
    // The free minute window: at most 60 s away.
    expect(reset).toBeGreaterThanOrEqual(0);
    expect(reset).toBeLessThanOrEqual(60);
    expect(reset).toBeLessThan(Date.now() / 1000 - 1_000_000);
  });

  it('without it, Reset is a Unix time at or after now, within the window', async () => {
    const url = await plain();
    const before = Math.floor(Date.now() / 1000);
    const reply = await call(url, '/pets', { key: 'pro-demo-key' });
    const after = Math.ceil(Date.now() / 1000);
    const reset = int(reply, RATE_LIMIT_HEADER.reset);
    expect(reset).toBeGreaterThanOrEqual(before);
    expect(reset).toBeLessThanOrEqual(after + 61);
  });
});

describe('noRetryAfter', () => {
  async function exhaust(url: string, key = 'free-demo-key'): Promise<Reply> {
    for (let i = 0; i < 5; i++) expect((await call(url, '/pets', { key })).status).toBe(200);
    const reply = await call(url, '/pets', { key });
    expect(reply.status).toBe(429);
    expect(reply.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(int(reply, RATE_LIMIT_HEADER.remaining)).toBe(0);
    return reply;
  }

  it('sends 429 without Retry-After', async () => {
    const url = await start({ noRetryAfter: true }, { plans: SMALL_PLANS, timeScale: SMALL_TIME_SCALE });
    const reply = await exhaust(url);
    expect(reply.headers[RATE_LIMIT_HEADER.retryAfter]).toBeUndefined();
  });

  it('without it, the 429 has a Retry-After within the window', async () => {
    const reply = await exhaust(await smallPlain(), 'retry-after-key');
    const retryAfter = int(reply, RATE_LIMIT_HEADER.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60 / SMALL_TIME_SCALE);
  });
});

describe('limiterLeak', () => {
  async function burst(url: string, key = 'free-demo-key'): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (let i = 0; i < 10; i++) replies.push(await call(url, '/pets', { key }));
    return replies;
  }

  it('lets N extra requests through per window while the headers still claim the plan limit', async () => {
    const url = await start({ limiterLeak: 3 }, { plans: SMALL_PLANS, timeScale: SMALL_TIME_SCALE });
    const replies = await burst(url);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    for (const reply of replies) expect(int(reply, RATE_LIMIT_HEADER.limit)).toBe(5);
  });

  it('without it, exactly the plan limit is accepted', async () => {
    const replies = await burst(await smallPlain(), 'leak-key');
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    for (const reply of replies) expect(int(reply, RATE_LIMIT_HEADER.limit)).toBe(5);
  });
});

describe('faults that lie about the quota (adjustDecision)', () => {
  const NOW = Date.UTC(2027, 0, 1);
  const free = DEFAULT_PLANS.free as Plan;
  const allowed = (remaining: number, over: Partial<LimitDecision> = {}): LimitDecision => ({
    outcome: 'allowed',
    limit: 60,
    remaining,
    resetAt: NOW + 30_000,
    ...over,
  });
  const adjust = (faults: FaultOptions, d: LimitDecision, now = NOW, id = 'key:a') =>
    new FaultInjector(faults).adjustDecision(id, free, d, now);

  it('changes nothing without them', () => {
    const d = allowed(10);
    expect(adjust({ wrongRemaining: 3, limiterLeak: 2 }, d)).toBe(d);
  });

  it('remainingRises: an even Remaining is sent as 2 more, at most the limit; an odd one as it is', () => {
    expect(adjust({ remainingRises: true }, allowed(10)).remaining).toBe(12);
    expect(adjust({ remainingRises: true }, allowed(11)).remaining).toBe(11);
    expect(adjust({ remainingRises: true }, allowed(58)).remaining).toBe(60);
  });

  it('resetDrift: Reset is the true reset plus Remaining seconds', () => {
    expect(adjust({ resetDrift: true }, allowed(10)).resetAt).toBe(NOW + 40_000);
    expect(adjust({ resetDrift: true }, allowed(0)).resetAt).toBe(NOW + 30_000);
  });

  it('wrongWindowHeaders: the day window is described, counted from the first request', () => {
    const injector = new FaultInjector({ wrongWindowHeaders: true });
    const first = injector.adjustDecision('key:a', free, allowed(59), NOW);
    const second = injector.adjustDecision('key:a', free, allowed(58), NOW + 1000);
    expect(first).toMatchObject({ limit: 1000, remaining: 999, resetAt: NOW + 86_400_000 });
    expect(second).toMatchObject({ limit: 1000, remaining: 998, resetAt: NOW + 86_400_000 });
    expect(injector.adjustDecision('key:b', free, allowed(59), NOW).remaining).toBe(999);
  });

  it('early429: refuses once half of the window is used, Retry-After at its reset', () => {
    expect(adjust({ early429: true }, allowed(30)).outcome).toBe('allowed');
    expect(adjust({ early429: true }, allowed(29))).toEqual({
      outcome: 'rate_limited',
      limit: 60,
      remaining: 0,
      resetAt: NOW + 30_000,
      retryAt: NOW + 30_000,
    });
  });

  it('rejectRetry: refuses the first admitted request once a true 429 says the quota is back, once', () => {
    const injector = new FaultInjector({ rejectRetry: true });
    const limited: LimitDecision = { ...allowed(0), outcome: 'rate_limited', retryAt: NOW + 1000 };
    expect(injector.adjustDecision('key:a', free, limited, NOW)).toBe(limited);
    // Before the retry time: not the retry (the limiter would refuse it anyway).
    expect(injector.adjustDecision('key:a', free, allowed(59), NOW + 500).outcome).toBe('allowed');
    const retry = injector.adjustDecision('key:a', free, allowed(59, { resetAt: NOW + 61_000 }), NOW + 1000);
    expect(retry).toMatchObject({ outcome: 'rate_limited', remaining: 0, retryAt: NOW + 61_000 });
    expect(injector.adjustDecision('key:a', free, allowed(58), NOW + 62_000).outcome).toBe('allowed');
  });
});

describe('faults in the 429 and deprecation headers', () => {
  it('retryAfterMismatch and cacheable429: Retry-After N s longer, Cache-Control public', async () => {
    const options = { plans: SMALL_PLANS, timeScale: SMALL_TIME_SCALE };
    const [faulty, plain429] = await Promise.all([
      start({ retryAfterMismatch: 4, cacheable429: true }, options).then(async (url) => {
        for (let i = 0; i < 5; i++) await call(url, '/pets');
        return call(url, '/pets');
      }),
      smallPlain().then(async (url) => {
        for (let i = 0; i < 5; i++) await call(url, '/pets', { key: 'headers-429-key' });
        return call(url, '/pets', { key: 'headers-429-key' });
      }),
    ]);
    expect([faulty.status, plain429.status]).toEqual([429, 429]);
    const reset = (r: Reply) => int(r, RATE_LIMIT_HEADER.reset) - Date.now() / 1000;
    expect(int(faulty, RATE_LIMIT_HEADER.retryAfter) - reset(faulty)).toBeGreaterThan(3);
    expect(faulty.headers['cache-control']).toBe('public, max-age=60');
    expect(Math.abs(int(plain429, RATE_LIMIT_HEADER.retryAfter) - reset(plain429))).toBeLessThan(2);
    expect(plain429.headers['cache-control']).toBeUndefined();
  });

  it('noSunsetLink: the deprecated operation keeps Deprecation and Sunset, without the Link', async () => {
    const [without, withLink] = await Promise.all([
      start({ noSunsetLink: true }).then((url) => call(url, '/pets/1', { key: BIG_KEY })),
      plain().then((url) => call(url, '/pets/1', { key: BIG_KEY })),
    ]);
    expect(without.status).toBe(200);
    expect(without.headers.deprecation).toMatch(/^@\d+$/);
    expect(without.headers.sunset).toMatch(/GMT$/);
    expect(without.headers.link).toBeUndefined();
    expect(withLink.headers.link).toBe('</openapi.yaml>; rel="sunset"');
  });
});

describe('faults in the limit, error bodies, content type, deprecation and schema', () => {
  it("wrongLimit: Limit is the plan limit + 1, skipping the plan's other limits; Remaining is the true one", async () => {
    const [faulty, normal] = await Promise.all([
      start({ wrongLimit: true }).then((url) => call(url, '/pets', { key: 'pro-demo-key' })),
      plain().then((url) => call(url, '/pets', { key: 'pro-demo-key' })),
    ]);
    expect([faulty.status, normal.status]).toEqual([200, 200]);
    const limit = int(normal, RATE_LIMIT_HEADER.limit);
    expect(int(faulty, RATE_LIMIT_HEADER.limit)).toBe(limit + 1);
    expect(int(faulty, RATE_LIMIT_HEADER.remaining)).toBe(limit - 1);
    const pro = DEFAULT_PLANS.pro as Plan;
    expect(pro.windows.map((w) => w.limit)).not.toContain(limit + 1);
    // A plan whose limits are consecutive: the first value above that is no limit of it.
    const plan: Plan = {
      name: 'tight',
      windows: [
        { name: 'minute', limit: 5, seconds: 60 },
        { name: 'day', limit: 6, seconds: 86_400 },
      ],
    };
    const d: LimitDecision = { outcome: 'allowed', limit: 5, remaining: 4, resetAt: 1000 };
    expect(new FaultInjector({ wrongLimit: true }).adjustDecision('key:a', plan, d, 0)).toMatchObject({
      limit: 7,
      remaining: 4,
    });
  });

  it("dayRetryAsMinute: the day's 429 announces a minute's wait; a minute's 429 and admitted answers are left alone", () => {
    const plan = DEFAULT_PLANS.free as Plan;
    const faulty = new FaultInjector({ dayRetryAsMinute: true });
    const day: LimitDecision = {
      outcome: 'rate_limited',
      limit: 1000,
      remaining: 0,
      resetAt: 9e7,
      retryAt: 9e7,
    };
    expect(faulty.adjustDecision('key:a', plan, day, 5000)).toMatchObject({
      resetAt: 65_000,
      retryAt: 65_000,
    });
    const minute: LimitDecision = {
      outcome: 'rate_limited',
      limit: 60,
      remaining: 0,
      resetAt: 30_000,
      retryAt: 30_000,
    };
    expect(faulty.adjustDecision('key:a', plan, minute, 5000)).toEqual(minute);
    const allowed: LimitDecision = { outcome: 'allowed', limit: 60, remaining: 3, resetAt: 30_000 };
    expect(faulty.adjustDecision('key:a', plan, allowed, 5000)).toEqual(allowed);
  });

  it('errorBodyStatus: Error bodies name 500 on a 4xx (and 400 on a 5xx); without it, the HTTP status', async () => {
    const [faulty, faulty500, normal] = await Promise.all([
      start({ errorBodyStatus: true }).then((url) => call(url, '/categories/987654', { key: BIG_KEY })),
      start({ errorBodyStatus: true, errorRate: 1 }).then((url) => call(url, '/pets', { key: BIG_KEY })),
      plain().then((url) => call(url, '/categories/987654', { key: BIG_KEY })),
    ]);
    expect([faulty.status, faulty500.status, normal.status]).toEqual([404, 500, 404]);
    expect(faulty.body).toMatchObject({ code: 'not_found', status: 500 });
    expect(faulty500.body).toMatchObject({ code: 'internal_error', status: 400 });
    expect(normal.body).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('xJsonContentType: JSON bodies (2xx and errors) as application/x-json; without it, application/json', async () => {
    const url = await start({ xJsonContentType: true });
    const [ok, missing, document, normal] = await Promise.all([
      call(url, '/pets', { key: BIG_KEY }),
      call(url, '/categories/987654', { key: BIG_KEY }),
      call(url, '/openapi.yaml', { key: BIG_KEY }),
      plain().then((u) => call(u, '/pets', { key: BIG_KEY })),
    ]);
    expect([ok.status, missing.status, document.status, normal.status]).toEqual([200, 404, 200, 200]);
    expect(ok.headers['content-type']).toMatch(/^application\/x-json\b/);
    expect(Array.isArray(ok.body)).toBe(true);
    expect(missing.headers['content-type']).toMatch(/^application\/x-json\b/);
    expect(missing.body).toMatchObject({ status: 404 });
    expect(document.headers['content-type']).toMatch(/^application\/yaml/);
    expect(normal.headers['content-type']).toMatch(/^application\/json\b/);
  });

  it('badDeprecation: Deprecation is an HTTP-date; without it, @<unix-seconds>', async () => {
    const [faulty, normal] = await Promise.all([
      start({ badDeprecation: true }).then((url) => call(url, '/pets/1', { key: BIG_KEY })),
      plain().then((url) => call(url, '/pets/1', { key: BIG_KEY })),
    ]);
    expect([faulty.status, normal.status]).toEqual([200, 200]);
    expect(normal.headers.deprecation).toMatch(/^@\d+$/);
    const seconds = Number(String(normal.headers.deprecation).slice(1));
    expect(faulty.headers.deprecation).toBe(new Date(seconds * 1000).toUTCString());
    expect(faulty.headers.sunset).toBe(normal.headers.sunset);
    expect(faulty.headers.link).toBe(normal.headers.link);
  });

  it('schemaViolation: pets carry status "lost" in 2xx bodies, the store is untouched; without it, the enum', async () => {
    const url = await start({ schemaViolation: true });
    const [list, one, missing] = await Promise.all([
      call(url, '/pets', { key: BIG_KEY }),
      call(url, '/pets/1', { key: BIG_KEY }),
      call(url, '/pets/987654', { key: BIG_KEY }),
    ]);
    expect([list.status, one.status, missing.status]).toEqual([200, 200, 404]);
    const pets = list.body as { status: string }[];
    expect(pets.length).toBeGreaterThan(0);
    for (const pet of pets) expect(pet.status).toBe('lost');
    expect(one.body).toMatchObject({ id: 1, status: 'lost' });
    expect(missing.body).toMatchObject({ code: 'not_found', status: 404 });
    // Filtering by a true status still finds pets: the store kept their real status.
    const available = await call(url, '/pets?status=available', { key: BIG_KEY });
    expect((available.body as unknown[]).length).toBeGreaterThan(0);
    const normal = await call(await plain(), '/pets', { key: BIG_KEY });
    for (const pet of normal.body as { status: string }[])
      expect(['available', 'pending', 'sold']).toContain(pet.status);
  });
});
