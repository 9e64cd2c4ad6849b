import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliWorkspace, killAllClis, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

/**
 * A fleet's refusals through the CLI, on a real redis-server and the reference server: a generator
 * that finds the fleet full, a fleet that never fills, and Ctrl-C while waiting for the others. The
 * fleet that runs (one start, one verdict, a lost generator) is fleet-netns.test.ts's.
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
  '15',
  '--duration',
  '3s',
  '--out',
  out,
  ...extra,
];

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
