import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { serveOptions } from '../../src/cli/command-options.ts';
import { serverOptionsFromArgs } from '../../src/config/serve.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { inSimulatedTime, type SimulatedServer, serversClosedAfterEach } from '../helpers/simulated.ts';

/**
 * `serve --refusal-status 503|403` and `--no-refusal-retry-after`: every refusal of the limiter (an
 * excess, a block, a ban) under the chosen status, with or without Retry-After, the quota headers as
 * `--headers` says. 3 a minute at time scale 30 is a window of 2 s. In simulated time.
 */

const plans: PlanTable = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 3, perDay: 1000 } });
const server = serversClosedAfterEach({ seedData: 3, timeScale: 30, plans }, 1);

const pets = (s: SimulatedServer) => call(s.url, '/pets?limit=1');

/** The window's three, then the reply to the excess. */
async function excess(s: SimulatedServer): Promise<Reply> {
  for (let i = 0; i < 3; i++) expect((await pets(s)).status).toBe(200);
  return pets(s);
}

describe('--refusal-status', () => {
  it('503: the excess is a 503 whose Error body says rate_limited and 503, Retry-After telling the window', () =>
    inSimulatedTime(async () => {
      const s = await server({ refusalStatus: 503 });
      const refused = await excess(s);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'rate_limited', status: 503 });
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      // Back with the window, as under 429.
      await sleep(2100);
      expect((await pets(s)).status).toBe(200);
    }));

  it("503 without Retry-After and without quota headers: nginx limit_req's bare refusal", () =>
    inSimulatedTime(async () => {
      const s = await server({ refusalStatus: 503, refusalRetryAfter: false, headerDialect: 'none' });
      const refused = await excess(s);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBeUndefined();
      expect(Object.keys(refused.headers).filter((h) => /ratelimit/i.test(h))).toEqual([]);
      expect(refused.body).toMatchObject({ code: 'rate_limited', message: 'rate limit exceeded' });
    }));

  it('403 with X-RateLimit-Remaining 0 and no Retry-After, as an API that tells only its quota', () =>
    inSimulatedTime(async () => {
      const s = await server({ refusalStatus: 403, refusalRetryAfter: false });
      const refused = await excess(s);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'rate_limited', status: 403 });
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-limit']).toBe('3');
      expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
      expect(refused.headers['retry-after']).toBeUndefined();
    }));

  it('a ban is answered with the chosen status, its code temporarily_banned', () =>
    inSimulatedTime(async () => {
      // banAfter 0: the first refusal tells the client, the next request inside it is banned.
      const s = await server({ refusalStatus: 403, banAfter: 0 });
      expect((await excess(s)).status).toBe(403);
      const banned = await pets(s);
      expect(banned.status).toBe(403);
      expect(banned.body).toMatchObject({ code: 'temporarily_banned', status: 403 });
      // The ban's 10 minutes at time scale 30: 20 s.
      expect(Number(banned.headers['retry-after'])).toBe(20);
    }));

  it('a block is answered with the chosen status, its Retry-After the block', () =>
    inSimulatedTime(async () => {
      // 150 s at time scale 30: 5 s.
      const s = await server({ refusalStatus: 503, blockMs: 150_000 });
      expect(Number((await excess(s)).headers['retry-after'])).toBe(5);
      await sleep(2500);
      const inside = await pets(s);
      expect(inside.status).toBe(503);
      expect(Number(inside.headers['retry-after'])).toBeLessThanOrEqual(3);
    }));
});

describe('the flags', () => {
  const options = async (argv: string[]) =>
    serverOptionsFromArgs(await serveOptions(yargs(argv)).parse(), {});

  it('default to 429 with Retry-After; --refusal-status 503 --no-refusal-retry-after is read as given', async () => {
    expect(await options([])).toMatchObject({ refusalStatus: 429, refusalRetryAfter: true });
    expect(await options(['--refusal-status', '503', '--no-refusal-retry-after'])).toMatchObject({
      refusalStatus: 503,
      refusalRetryAfter: false,
    });
  });

  it('a status other than 429, 503 and 403 is refused: one line, exit 2', async () => {
    const refused = await cliInProcess(['serve', '--port', '0', '--refusal-status', '500']);
    expect(refused.stderr.trim()).toMatch(/^petstore-load: .*refusal-status.*429, 503, 403/);
    expect(refused.code).toBe(2);
  });
});
