import { afterAll, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, type PlanTable } from '../../src/api/plans.ts';
import { readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { call, type Reply, sleep } from '../helpers/http.ts';
import { killAllClis, killCli, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { inSimulatedTime, type SimulatedServer, serversClosedAfterEach } from '../helpers/simulated.ts';

/**
 * `--limiter sliding --count-refused` on the reference server: a refused request holds its place in the
 * window as an admitted one does, and the seed's headers say so truthfully (a client that waits its
 * Retry-After gets in). The window is 2 s (3 a minute at time scale 30). The windows are kept in
 * simulated time, the server answering in process (test/helpers/simulated.ts): its limiter reads
 * the faked `Date.now()`, so waiting a window out costs nothing.
 */

/** Each answer takes a loopback's millisecond, as over a socket. */
const LOOPBACK_MS = 1;

// No ban: the test knocks after a 429 on purpose.
const plans: PlanTable = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 3, perDay: 1000 } });
const server = serversClosedAfterEach({ seedData: 3, banAfter: 1000 }, LOOPBACK_MS);

const W = 2000;

async function burst(s: SimulatedServer, count: number): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i++) replies.push(await call(s.url, '/pets?limit=1'));
  return replies;
}
const statuses = (replies: Reply[]) => replies.map((r) => r.status);
const until = (at: number) => sleep(Math.max(0, at - Date.now()));

describe('a sliding log that counts refused requests', () => {
  it.each([
    [false, [200, 200, 200]],
    [true, [200, 200, 429]],
  ])(
    'countRefused %s: after a knock refused mid-window, a window after the burst answers %j (the knock holds a place only when counted)',
    async (countRefused, after) => {
      const s = await server({
        timeScale: 30,
        plans,
        limiter: 'sliding',
        countRefused: countRefused || undefined,
      });
      await inSimulatedTime(async () => {
        const first = await burst(s, 4);
        const firstDone = Date.now();
        expect(statuses(first)).toEqual([200, 200, 200, 429]);
        await sleep(W / 2);
        const knock = await call(s.url, '/pets?limit=1');
        const knockedAt = Date.now();
        expect(knock.status).toBe(429);
        // The burst has aged out, the knock (sent after it) has not.
        await until(firstDone + W + 100);
        expect(Date.now()).toBeLessThan(knockedAt + W - 200);
        const later = await burst(s, 3);
        expect(statuses(later)).toEqual(after);
        const last = later[2] as Reply;
        const h = readRateLimitHeaders(last.headers);
        expect(h.remaining).toBe(0);
        // Reset: the newest counted request, refused or not, ages out within a window.
        expect(h.reset).toBeGreaterThan(Date.now() / 1000);
        expect(h.reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000 + W / 1000));
        if (last.status !== 429) return;
        // Retry-After is truthful: waited out, the next request is admitted.
        await sleep(Number(last.headers['retry-after']) * 1000);
        expect((await call(s.url, '/pets?limit=1')).status).toBe(200);
      });
    },
  );

  it('only the sliding log and counter count refused requests', async () => {
    await expect(startServer({ countRefused: true })).rejects.toThrow(
      /countRefused applies to the sliding and sliding-counter limiters only, not to fixed/,
    );
  });
});

describe('a sliding counter that counts refused requests', () => {
  it.each([
    [false, true],
    [true, false],
  ])(
    'countRefused %s: knocking every 100 ms for two periods after a spent burst gets in: %s',
    async (countRefused, getsIn) => {
      const s = await server({
        timeScale: 30,
        plans,
        limiter: 'sliding-counter',
        countRefused: countRefused || undefined,
      });
      await inSimulatedTime(async () => {
        expect(statuses(await burst(s, 4))).toEqual([200, 200, 200, 429]);
        const knocks: number[] = [];
        for (let i = 0; i < (2 * W) / 100; i++) {
          knocks.push((await call(s.url, '/pets?limit=1')).status);
          await sleep(100);
        }
        // Not counted, the knocks get in as the previous period's weight falls; counted, each
        // one keeps the estimate at the limit.
        expect(knocks.includes(200)).toBe(getsIn);
        // Either way Retry-After is truthful: waited out, the next request is admitted.
        const last = await call(s.url, '/pets?limit=1');
        if (last.status !== 429) return;
        await sleep(Number(last.headers['retry-after']) * 1000);
        expect((await call(s.url, '/pets?limit=1')).status).toBe(200);
      });
    },
  );
});

describe('petstore-load serve --count-refused', () => {
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

  it('--help explains it', async () => {
    const { code, stdout } = await runToExit(['serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--count-refused[\s\S]*refused requests count too/);
  });

  it('with any limiter but sliding and sliding-counter: one line, exit code 2', async () => {
    const { code, stdout, stderr } = await cliInProcess(['serve', '--port', '0', '--count-refused']);
    expect(stderr.trim()).toMatch(
      /^petstore-load: --count-refused applies to the sliding and sliding-counter limiters only, not to fixed$/,
    );
    expect(stdout).not.toContain('listening on');
    expect(code).toBe(2);
  });
});
