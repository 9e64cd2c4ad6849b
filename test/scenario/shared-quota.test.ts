import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { killAllClis, readJson, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { type RedisProcess, startRedis } from '../helpers/redis.ts';

/**
 * Three generator processes share one Free key through Redis, as generators on three machines
 * would: together they must pace as one client. At time scale 10 the Free quota is 60 requests per
 * 6 s window (10 a second); each shard alone would want far more (2 virtual users, no think time).
 */
const SCALE = 10;
const SHARDS = 3;

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-shared-'));
let redis: RedisProcess;
let server: RunningServer;
beforeAll(async () => {
  redis = await startRedis();
  server = await startServer({ timeScale: SCALE });
}, 30_000);
afterAll(async () => {
  killAllClis();
  await server?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('one Free key shared by three generators through Redis', () => {
  it('stays within the quota in every window, uses at least 95% of it, draws no 429, and merges to the sum', async () => {
    const args = (i: number) => [
      'run',
      'test/helpers/scenarios/shared-browse.ts',
      '--base-url',
      server.url,
      '--api-key',
      'free-demo-key',
      '--plan',
      'free',
      '--time-scale',
      String(SCALE),
      '--vus',
      String(2 * SHARDS),
      '--duration',
      '18s',
      '--quota-store',
      redis.url,
      '--shard',
      `${i}/${SHARDS}`,
      '--out',
      join(dir, `shard-${i}`),
      '--quiet',
    ];
    const clis = Array.from({ length: SHARDS }, (_, i) => spawnCli(args(i + 1)));
    const outcomes = await withTimeout(
      Promise.all(clis.map((c) => c.exited)),
      90_000,
      'three shards sharing one key',
    );
    outcomes.forEach((o, i) => {
      expect(o.code, `shard ${i + 1}: ${clis[i]?.stderr()}`).toBe(0);
    });
    const shards = Array.from(
      { length: SHARDS },
      (_, i) => readJson(join(dir, `shard-${i + 1}`, 'result.json')) as RunResult,
    );
    shards.forEach((r, i) => {
      expect(resultProblem(r)).toBeUndefined();
      expect(r.meta.shard).toEqual({ index: i + 1, count: SHARDS });
      expect(r.meta.sharedQuota).toBe(redis.url);
      expect(r.compliance.rateLimited, `shard ${i + 1}`).toBe(0);
      // Each did real work: the quota was shared, not taken by one.
      expect(r.overall.requests).toBeGreaterThan(20);
    });

    const merged = await cliInProcess([
      'merge',
      ...shards.map((_, i) => join(dir, `shard-${i + 1}`, 'result.json')),
      '--out',
      join(dir, 'merged.json'),
    ]);
    expect(merged.code, merged.stderr).toBe(0);
    const all = readJson(join(dir, 'merged.json')) as RunResult;
    expect(all.overall.requests).toBe(shards.reduce((n, r) => n + r.overall.requests, 0));
    expect(all.compliance.rateLimited).toBe(0);
    expect(all.compliance.violations).toBe(0);
    expect(all.compliance.quotaUtilization).toBeGreaterThanOrEqual(0.95);
    // Together within the quota: no 5 whole seconds (inside any 6 s window) hold more than 60 requests.
    const perSecond: number[] = [];
    for (const point of all.timeline) perSecond[point.t] = (perSecond[point.t] ?? 0) + point.requests;
    for (let t = 0; t < perSecond.length; t++) perSecond[t] ??= 0;
    for (let i = 0; i + 5 <= perSecond.length; i++) {
      const sum = perSecond.slice(i, i + 5).reduce((a, b) => a + b, 0);
      expect(sum, `seconds ${i}..${i + 4}`).toBeLessThanOrEqual(60);
    }
  }, 120_000);
});
