import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoKeyFor } from '../../src/api/demo-keys.ts';
import { BUCKET_BOUNDS_SECONDS } from '../../src/metrics/buckets.ts';
import type { RunResult } from '../../src/result/types.ts';
import { killAllClis, readJson, runCli, spawnCli, withTimeout } from '../helpers/integration-cli.ts';
import { type PrometheusProcess, SKIP_PROMETHEUS, startPrometheus } from '../helpers/prometheus.ts';

/**
 * `run --metrics prometheus=URL` into a real Prometheus (remote-write receiver on), read back through
 * its HTTP API: the request counts per operation are result.json's exactly, the p99 of the pushed
 * histogram lies within one bucket of result.json's, no series carries the key; and a Prometheus
 * killed mid-run changes nothing in the run but a line counting the samples dropped.
 */

/** A 15 s run, two process starts, setup and teardown, and the final push, on a loaded 2-core machine. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 90_000;
const KEY = demoKeyFor('free') as string;

let dir: string;
const prometheuses: PrometheusProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-metrics-'));
});

afterAll(async () => {
  killAllClis();
  await Promise.all(prometheuses.map((p) => p.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function prometheus(): Promise<PrometheusProcess> {
  const p = await startPrometheus();
  prometheuses.push(p);
  return p;
}

/** The bucket (index of its upper bound) a latency in seconds falls in. */
const bucketOf = (seconds: number) => {
  const i = BUCKET_BOUNDS_SECONDS.findIndex((b) => seconds <= b);
  return i < 0 ? BUCKET_BOUNDS_SECONDS.length : i;
};

describe.skipIf(SKIP_PROMETHEUS).concurrent('live metrics into a real Prometheus', () => {
  it(
    'counts per operation equal result.json, p99 within a bucket, no key in any series',
    async () => {
      const prom = await prometheus();
      const out = join(dir, 'counts');
      const run = await runCli(
        [
          'run',
          'mixed-traffic',
          '--duration',
          '15s',
          '--api-key',
          KEY,
          '--metrics',
          `prometheus=${prom.writeUrl}`,
          '--metrics-interval',
          '2s',
          '--out',
          out,
        ],
        RUN_TIMEOUT_MS,
      );
      const context = `stdout: ${run.stdout}\nstderr: ${run.stderr}\nprometheus: ${prom.output()}`;
      expect(run.code, context).toBe(0);
      expect(run.stderr, context).toMatch(
        /metrics: pushed [1-9]\d* samples to prometheus at 127\.0\.0\.1:\d+/,
      );
      expect(run.stderr, context).not.toMatch(/dropped/);
      const result = readJson(join(out, 'result.json')) as RunResult;

      const counts = await prom.query('sum by (operation) (petstore_load_requests_total)');
      const pushed = Object.fromEntries(counts.map((c) => [c.metric.operation, c.value]));
      const expected = Object.fromEntries(
        Object.entries(result.operations).map(([op, s]) => [op, s.requests]),
      );
      expect(pushed, context).toEqual(expected);
      expect(Object.keys(expected).length).toBeGreaterThan(5);
      const [rateLimited] = await prom.query('sum(petstore_load_rate_limited_total)');
      expect(rateLimited?.value).toBe(result.compliance.rateLimited);

      const [p99] = await prom.query(
        'histogram_quantile(0.99, sum by (le) (petstore_load_response_time_seconds_bucket))',
      );
      const promP99 = p99?.value as number;
      const resultP99 = result.overall.response.p99 / 1000;
      expect(
        Math.abs(bucketOf(promP99) - bucketOf(resultP99)),
        `${promP99} s vs ${resultP99} s`,
      ).toBeLessThanOrEqual(1);

      const series = await prom.series('{__name__=~"petstore_load_.+"}');
      expect(series.length).toBeGreaterThan(100);
      for (const labels of series) {
        // result.json names the run's series: its run_id is theirs.
        expect(labels).toMatchObject({ scenario: 'mixed-traffic', plan: 'free', run_id: result.meta.runId });
        for (const [name, value] of Object.entries(labels)) {
          expect(value, name).not.toContain(KEY);
          expect(name).not.toContain(KEY);
        }
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a Prometheus killed mid-run: the run ends as without metrics, with the samples dropped counted',
    async () => {
      const prom = await prometheus();
      const out = join(dir, 'killed');
      const cli = spawnCli([
        'run',
        'mixed-traffic',
        '--duration',
        '15s',
        '--metrics',
        `prometheus=${prom.writeUrl}`,
        '--metrics-interval',
        '1s',
        '--out',
        out,
      ]);
      // Once the first pushes have arrived (the run is a few seconds in), then 3 s more.
      const started = Date.now();
      while ((await prom.query('count(petstore_load_requests_total)')).length === 0) {
        if (Date.now() - started > 30_000) throw new Error(`no samples arrived: ${cli.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await prom.stop();
      const { code } = await withTimeout(cli.exited, RUN_TIMEOUT_MS, 'the run with Prometheus gone');
      const context = `stdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`;
      expect(code, context).toBe(0);
      const line =
        /metrics: pushed (\d+) samples to prometheus at 127\.0\.0\.1:\d+ \(run_id \w+\), dropped (\d+) samples \(([^)]*)\)/.exec(
          cli.stderr(),
        );
      expect(line, context).not.toBeNull();
      expect(Number(line?.[1])).toBeGreaterThan(0);
      expect(Number(line?.[2])).toBeGreaterThan(0);
      expect(line?.[3]).toMatch(/ECONNREFUSED|ECONNRESET|UND_ERR|deadline/);
      const result = readJson(join(out, 'result.json')) as RunResult;
      expect(result.meta.partial).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );
});
