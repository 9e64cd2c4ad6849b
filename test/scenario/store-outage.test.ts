import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { type Cli, cliWorkspace, readJson, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { type RedisProcess, startRedis, startSentinelGroup } from '../helpers/redis.ts';

/**
 * Two generators share one Free key through a Redis that goes away mid-run, as a store restarted
 * without persistence, killed for good, or failed over by Sentinel would. At time scale 10 the Free
 * quota is 60 requests per 6 s window: 240 in a 24 s run. The store is taken away once the
 * generators have reserved a number of sends, not at a second of the clock: on a loaded machine the
 * CLIs take seconds to start.
 */
const SCALE = 10;
const workspace = cliWorkspace('store-outage');
// Each test its own reference server: they run at once, and one server would count the three
// tests' sends of the one Free demo key against one quota.
const servers: RunningServer[] = [];
const serverFor = async () => {
  const server = await startServer({ timeScale: SCALE });
  servers.push(server);
  return server;
};
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** What the Redis client says of a lost connection: none of it may reach a person. */
const CLIENT_WORDS =
  /enableOfflineQueue|max retries|Connection is closed|ECONNREFUSED|ioredis|Stream isn't|READONLY/i;

function shards(server: RunningServer, store: string, duration: string, dir: string): Cli[] {
  return [1, 2].map((i) =>
    spawnCli([
      'run',
      'catalogue-browse',
      '--base-url',
      server.url,
      '--api-key',
      'free-demo-key',
      '--plan',
      'free',
      '--time-scale',
      String(SCALE),
      '--duration',
      duration,
      '--quota-store',
      store,
      '--shard',
      `${i}/2`,
      '--out',
      join(dir, `shard-${i}`),
    ]),
  );
}

/** Resolves once the generators have reserved `count` sends in the store at `port`. */
async function reserved(port: number, count: number): Promise<void> {
  const redis = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    const deadline = Date.now() + 40_000;
    for (;;) {
      const keys = await redis.keys('petstore-load:quota:*:seq');
      const seqs = await Promise.all(keys.map((k) => redis.get(k)));
      if (seqs.some((s) => Number(s) >= count)) return;
      if (Date.now() > deadline) throw new Error(`the generators reserved fewer than ${count} sends in 40 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    redis.disconnect();
  }
}

async function outcomes(clis: Cli[], what: string) {
  const ends = await withTimeout(Promise.all(clis.map((c) => c.exited)), 120_000, what);
  return clis.map((c, i) => ({ ...ends[i], stdout: c.stdout(), stderr: c.stderr() }));
}

function results(dir: string): RunResult[] {
  return [1, 2].map((i) => readJson(join(dir, `shard-${i}`, 'result.json')) as RunResult);
}

/** Admitted over both shards against the plan's requests in the run's span. */
function admittedShare(rs: RunResult[]): number {
  return rs.reduce((n, r) => n + r.compliance.quotaUtilization, 0);
}

// The three run at once (a few requests a second each, mostly waiting): one after another they took 80 s.
describe.concurrent('a shared quota store that goes away', () => {
  it('restarted empty mid-run: both shards wait for it, resume from the server, draw no 429 and use most of the plan', async () => {
    const dir = workspace.fresh('restart');
    let redis: RedisProcess | undefined = await startRedis();
    const port = redis.port;
    try {
      const clis = shards(await serverFor(), redis.url, '24s', dir);
      await reserved(port, 60);
      redis.child.kill('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      redis = await startRedis({ port });
      const ends = await outcomes(clis, 'two shards over a restarted store');
      for (const [i, end] of ends.entries()) {
        expect(end.code, `shard ${i + 1}: ${end.stderr}`).toBe(0);
        expect(end.stdout + end.stderr).not.toMatch(CLIENT_WORDS);
        expect(end.stdout).toMatch(
          /quota store unreachable [\d.]+ s to [\d.]+ s: 0 requests sent without it/,
        );
      }
      const rs = results(dir);
      for (const r of rs) {
        expect(resultProblem(r)).toBeUndefined();
        expect(r.compliance.rateLimited).toBe(0);
        expect(r.compliance.violations).toBe(0);
        expect(r.workload.failedIterations).toBe(0);
        const [outage] = r.compliance.storeOutages ?? [];
        expect(outage?.to).toBeGreaterThan(outage?.from ?? Number.POSITIVE_INFINITY);
        expect(outage?.sentWithout).toBe(0);
        // A restarted store is another server: what it forgot came back from the target's word, by
        // this shard or by the other before it (then this one found it held), or a window was waited.
        expect(['server', 'held', 'intact']).toContain(outage?.resumed);
      }
      expect(admittedShare(rs)).toBeGreaterThanOrEqual(0.6);
    } finally {
      await redis?.stop();
    }
  }, 150_000);

  it('gone for good: both shards end when due, write their result and report, and exit 3 with one line', async () => {
    const dir = workspace.fresh('gone');
    const redis = await startRedis();
    try {
      const clis = shards(await serverFor(), redis.url, '16s', dir);
      await reserved(redis.port, 30);
      redis.child.kill('SIGKILL');
      const ends = await outcomes(clis, 'two shards over a store gone for good');
      for (const [i, end] of ends.entries()) {
        expect(end.code, `shard ${i + 1}: ${end.stderr}`).toBe(3);
        const lines = end.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          /^petstore-load: quota store redis:\/\/127\.0\.0\.1:\d+ unreachable from [\d.]+ s to the end of the run: \d+ requests? held, none sent without it$/,
        );
        expect(end.stdout + end.stderr).not.toMatch(CLIENT_WORDS);
        expect(existsSync(join(dir, `shard-${i + 1}`, 'report.html'))).toBe(true);
      }
      for (const r of results(dir)) {
        expect(resultProblem(r)).toBeUndefined();
        expect(r.compliance.rateLimited).toBe(0);
        const [outage] = r.compliance.storeOutages ?? [];
        expect(outage).toBeDefined();
        expect(outage?.to).toBeUndefined();
        expect(outage?.sentWithout).toBe(0);
      }
    } finally {
      await redis.stop();
    }
  }, 150_000);

  it('failed over by Sentinel: both shards follow the promoted replica, draw no 429 and use most of the plan', async () => {
    const dir = workspace.fresh('sentinel');
    const group = await startSentinelGroup();
    try {
      const clis = shards(await serverFor(), group.url, '24s', dir);
      await reserved(group.master.port, 60);
      group.master.child.kill('SIGKILL');
      await group.promoted(20_000);
      const ends = await outcomes(clis, 'two shards over a failed-over store');
      for (const [i, end] of ends.entries()) {
        expect(end.code, `shard ${i + 1}: ${end.stderr}`).toBe(0);
        expect(end.stdout + end.stderr).not.toMatch(CLIENT_WORDS);
      }
      const rs = results(dir);
      for (const r of rs) {
        expect(resultProblem(r)).toBeUndefined();
        expect(r.meta.sharedQuota).toBe(group.url);
        expect(r.compliance.rateLimited).toBe(0);
        expect(r.compliance.violations).toBe(0);
        expect(r.compliance.storeOutages?.[0]?.to).toBeDefined();
      }
      expect(admittedShare(rs)).toBeGreaterThanOrEqual(0.6);
    } finally {
      await group.stop();
    }
  }, 150_000);
});
