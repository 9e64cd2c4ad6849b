import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  cliWorkspace,
  killAllClis,
  readJson,
  runCli,
  spawnCli,
  withTimeout,
} from '../helpers/integration-cli.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

/**
 * A fleet through the CLI on loopback, a real redis-server and the reference server: judged as one at
 * its end (no timing in it), then its refusals: an index taken, another N, a fleet that never
 * fills, and Ctrl-C while waiting for the others. One start, a cut from the store, a lost generator
 * and a breach seen by all are fleet-netns.test.ts's, each generator on a host of its own.
 */
let redis: RedisProcess;
let target: RunningServer;
const workspace = cliWorkspace('fleet-run');
beforeAll(async () => {
  redis = await startRedis();
  target = await startServer({ timeScale: 10, seedData: 5 });
});
afterAll(async () => {
  killAllClis();
  await target?.close();
  await redis?.stop();
});

const generator = (fleet: string, out: string, extra: string[] = []) => [
  'run',
  'catalogue-browse',
  '--base-url',
  target.url,
  '--plan',
  'pro',
  '--api-key',
  'pro-demo-key',
  '--time-scale',
  '10',
  '--quota-store',
  redis.url,
  '--fleet',
  fleet,
  '--generators',
  '3',
  '--rate',
  '20',
  '--duration',
  '3s',
  '--out',
  out,
  ...extra,
];

describe('a fleet judged as one', () => {
  it("exits on the fleet's verdict: a count each shard misses alone and the fleet meets passes every one", async () => {
    const dir = workspace.fresh('judged');
    // 20 iterations/s for 3 s: about 95 requests in all, 30 a shard and 9 more for the one that sets
    // up and tears down (measured at 15/s: 67 in all, one shard 31). 50: no shard alone, the fleet well.
    const judged = ['--threshold', 'requests>=50'];
    const outcomes = await withTimeout(
      Promise.all([1, 2, 3].map((i) => runCli(generator('judged', join(dir, `g${i}`), judged), 60_000))),
      70_000,
      'the fleet',
    );
    const why = outcomes.map((o) => `${o.stdout}\n${o.stderr}`).join('\n');
    expect(
      outcomes.map((o) => o.code),
      why,
    ).toEqual([0, 0, 0]);
    const shards = [1, 2, 3].map((i) => {
      const k = Number(/generator (\d) of 3 joined/.exec(outcomes[i - 1]?.stderr ?? '')?.[1]);
      return readJson(join(dir, `g${i}`, `shard-${k}`, 'result.json')) as RunResult;
    });
    for (const r of shards) expect(r.thresholds?.[0]?.passed, why).toBe(false);
    const writers = [1, 2, 3].filter((i) => existsSync(join(dir, `g${i}`, 'result.json')));
    expect(writers).toHaveLength(1);
    const fleet = readJson(join(dir, `g${writers[0]}`, 'result.json')) as RunResult;
    expect(fleet.thresholds?.[0]?.passed).toBe(true);
    expect(fleet.overall.requests).toBe(shards.reduce((sum, r) => sum + r.overall.requests, 0));
  }, 90_000);
});

describe('a fleet that cannot start', () => {
  it('refuses an index taken and another N, each with one line and nothing sent; a fleet that never fills ends', async () => {
    const dir = workspace.fresh('refused');
    // Generator 1 of fleet lonely waits for two others that never come.
    const first = spawnCli(generator('lonely', join(dir, 'g1'), ['--shard', '1/3', '--fleet-wait', '4s']));
    const deadline = Date.now() + 20_000;
    while (!first.stderr().includes('joined fleet lonely') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    // Refusals send nothing: in this process, as the CLI's command line runs them.
    const taken = await cliInProcess(generator('lonely', join(dir, 'g2'), ['--shard', '1/3']));
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(
      /^petstore-load: fleet lonely: generator 1 has joined already \(.+:\d+\)\n$/,
    );
    const four = generator('lonely', join(dir, 'g3')).map((a) => (a === '3' ? '4' : a));
    const other = await cliInProcess(four);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('fleet lonely was joined as 3 generators; this one says --generators 4');
    for (const g of ['g2', 'g3']) expect(existsSync(join(dir, g))).toBe(false);
    const { code } = await withTimeout(first.exited, 20_000, 'the lonely generator');
    expect(code, first.stderr()).toBe(3);
    expect(first.stderr()).toContain(
      'fleet lonely: 1 of 3 generators joined within 4 s (--fleet-wait); nothing was sent',
    );
    expect(existsSync(join(dir, 'g1', 'shard-1', 'result.json'))).toBe(false);
  }, 60_000);

  it('ends at once on Ctrl-C while it waits for the others, exit 130, nothing sent', async () => {
    const dir = workspace.fresh('interrupted');
    const cli = spawnCli(generator('waiting', join(dir, 'g6'), ['--fleet-wait', '60s']));
    const deadline = Date.now() + 20_000;
    while (!cli.stderr().includes('joined fleet waiting') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const asked = Date.now();
    cli.child.kill('SIGINT');
    const { code } = await withTimeout(cli.exited, 10_000, 'the waiting generator');
    expect(code, cli.stderr()).toBe(130);
    expect(Date.now() - asked).toBeLessThan(3000);
    expect(cli.stderr()).toContain('interrupted while waiting for the generators to join; nothing was sent');
    expect(existsSync(join(dir, 'g6', 'result.json'))).toBe(false);
  }, 30_000);
});
