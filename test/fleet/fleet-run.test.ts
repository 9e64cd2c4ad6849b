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
 * Three generators of one fleet through the CLI, started 0.7 s apart, on a real redis-server and
 * the reference server: each claims its shard, setup runs once (generator 1), all start at one
 * instant of the store's clock, teardown runs once all have ended, the shared key draws no 429, and
 * one fleet result is written, judged on the merged figures, and fetched again by `merge --fleet`.
 * Then a generator that finds the fleet full, and a fleet that never fills, are refused.
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

const count = (r: RunResult, op: string) =>
  (r.operations as Record<string, { requests: number }>)[op]?.requests ?? 0;

// 15 iterations/s for 3 s over three shards: about 45 in all, 15 each. A count no shard reaches
// alone and the fleet does: each shard's verdict fails, the fleet's passes, and that is the exit.
const threshold = ['--threshold', 'requests>=30'];

describe('a fleet of three generators started 0.7 s apart', () => {
  it('starts as one, sets up and tears down once, and writes one fleet result judged as one', async () => {
    const dir = workspace.fresh('three');
    const runs: Promise<Awaited<ReturnType<typeof runCli>>>[] = [];
    for (let i = 1; i <= 3; i++) {
      runs.push(runCli(generator('nightly', join(dir, `g${i}`), threshold), 60_000));
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const outcomes = await withTimeout(Promise.all(runs), 70_000, 'the fleet');
    const why = outcomes.map((o) => `${o.stdout}\n${o.stderr}`).join('\n');
    expect(
      outcomes.map((o) => o.code),
      why,
    ).toEqual([0, 0, 0]);
    const shards = [1, 2, 3].map(
      (i) => readJson(join(dir, `g${i}`, `shard-${i}`, 'result.json')) as RunResult,
    );
    // Each claimed its shard in turn, and says so.
    expect(shards.map((r) => r.meta.shard)).toEqual([
      { index: 1, count: 3 },
      { index: 2, count: 3 },
      { index: 3, count: 3 },
    ]);
    expect(outcomes[1]?.stderr).toContain('generator 2 of 3 joined fleet nightly');
    // One start: the workloads began within 250 ms of one another, though started 1.4 s apart.
    const starts = shards.map((r) => Date.parse(r.meta.startedAt));
    expect(Math.max(...starts) - Math.min(...starts), why).toBeLessThanOrEqual(250);
    // Setup (3 pets created) once, by generator 1; teardown (3 deleted) once, once all had ended.
    expect(shards.map((r) => count(r, 'createPet'))).toEqual([3, 0, 0]);
    expect(shards.map((r) => count(r, 'deletePet')).reduce((a, b) => a + b, 0)).toBe(3);
    expect(shards.filter((r) => count(r, 'deletePet') > 0)).toHaveLength(1);
    expect(shards.map((r) => r.overall.rateLimited)).toEqual([0, 0, 0]);
    // Each shard alone fails the count; the fleet passes it.
    for (const r of shards) expect(r.thresholds?.[0]?.passed, why).toBe(false);
    // The fleet's result, written once (by the first to merge), is the shards added up.
    const written = [1, 2, 3].filter((i) => existsSync(join(dir, `g${i}`, 'result.json')));
    expect(written).toHaveLength(1);
    const fleetDir = join(dir, `g${written[0]}`);
    const fleet = readJson(join(fleetDir, 'result.json')) as RunResult;
    expect(existsSync(join(fleetDir, 'report.html'))).toBe(true);
    expect(fleet.overall.requests).toBe(shards.reduce((sum, r) => sum + r.overall.requests, 0));
    expect(fleet.thresholds?.[0]?.passed).toBe(true);
    expect(fleet.meta.partial).toBe(false);
    expect(fleet.meta.fleet).toMatchObject({ name: 'nightly', generators: 3, lost: [] });
    expect(fleet.meta.fleet?.shards.map((s) => [s.index, s.state, s.requests, s.startedAt])).toEqual(
      shards.map((r, i) => [i + 1, 'finished', r.overall.requests, r.meta.startedAt]),
    );
    for (const o of outcomes) expect(o.stdout).toContain('fleet nightly of 3 generators');
    // Fetched afterwards from the store by another process: the same result.
    const fetched = await cliInProcess([
      'merge',
      '--fleet',
      `${redis.url}/nightly`,
      '-o',
      join(dir, 'fetched'),
    ]);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(readJson(join(dir, 'fetched', 'result.json'))).toEqual(fleet);
  }, 90_000);

  it('refuses a fourth generator, and a fleet that never fills, each with one line and nothing sent', async () => {
    const dir = workspace.fresh('refused');
    // Refusals send nothing: in this process, as the CLI's command line runs them.
    const full = await cliInProcess(generator('nightly', join(dir, 'g4'), threshold));
    expect(full.code).toBe(2);
    expect(full.stderr).toContain('fleet nightly: all 3 generators have joined already');
    expect(existsSync(join(dir, 'g4', 'result.json'))).toBe(false);
    const alone = await cliInProcess(generator('lonely', join(dir, 'g5'), ['--fleet-wait', '1s']));
    expect(alone.code).toBe(3);
    expect(alone.stderr).toContain(
      'fleet lonely: 1 of 3 generators joined within 1 s (--fleet-wait); nothing was sent',
    );
    expect(existsSync(join(dir, 'g5', 'result.json'))).toBe(false);
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
