import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-workers-'));
afterAll(() => {
  killAllClis();
  rmSync(dir, { recursive: true, force: true });
});

describe('run --workers 2 (embedded server, Free plan)', () => {
  it('splits the workload over two threads that pace as one client, and merges their results', async () => {
    const out = join(dir, 'two');
    const outcome = await runCli(
      ['run', '--workers', '2', '--duration', '8s', '--out', out, '--quiet'],
      90_000,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    expect(result.meta.workers).toBe(2);
    // One quota for both: no 429, and the plan's rate used, not twice it.
    expect(result.compliance.rateLimited).toBe(0);
    expect(result.compliance.violations).toBe(0);
    expect(result.compliance.quotaUtilization).toBeGreaterThan(0.85);
    expect(result.compliance.quotaUtilization).toBeLessThanOrEqual(1.01);
    // Both threads' iterations are in it: mixed-traffic's setup ran once, its flows in both.
    expect(result.workload.iterations).toBeGreaterThan(10);
    expect(result.checks.filter((c) => c.failures > 0).map((c) => c.id)).toEqual([]);
  }, 100_000);

  it('starts every worker when setup is instant: a start message that comes early is kept', async () => {
    // No setup: worker 1 says "set up" before worker 2 has booted far enough to wait for it.
    const out = join(dir, 'no-setup');
    const outcome = await runCli(
      [
        'run',
        'test/helpers/scenarios/shared-browse.ts',
        '--workers',
        '2',
        '--duration',
        '3s',
        '--out',
        out,
        '--quiet',
      ],
      60_000,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(result.meta.workers).toBe(2);
    expect(result.overall.requests).toBeGreaterThan(0);
  }, 70_000);

  it('spreads a tenant mix over the threads by its keys: each key in one thread, its whole rate', async () => {
    const out = join(dir, 'tenants');
    const outcome = await runCli(
      ['run', 'test/helpers/scenarios/tenant-browse.ts', '--workers', '2', '--out', out, '--quiet'],
      60_000,
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    expect(result.meta.workers).toBe(2);
    for (const [plan, keys, share] of [
      ['free', 6, 0.5],
      ['pro', 3, 0.1],
    ] as const) {
      const tier = result.byPlan?.[plan];
      expect(tier?.keysSeen).toBe(keys);
      expect(tier?.rateLimited).toBe(0);
      // Every key at its own rate: none left out, none sent by both threads (which would double it).
      expect(tier?.utilization.min).toBeGreaterThan(share * 0.6);
      expect(tier?.utilization.max).toBeLessThan(share * 1.4);
    }
    expect(result.compliance.violations).toBe(0);
  }, 70_000);

  it.each([
    [['--workers', '0'], /--workers must be a whole number from 1 to 64/],
    [['--workers', '2', '--abort-on-fail'], /--abort-on-fail .* cannot be used with --workers/],
    [['--shard', '4/3'], /--shard: expected I\/N with 1 <= I <= N/],
    [['--quota-store', 'http://x'], /--quota-store: only redis:\/\/, rediss:\/\/ and redis\+sentinel:\/\//],
  ])('refuses %j in one line, exit 2', async (args, message) => {
    // In this process: a refusal is the command line's (test/cli/run.test.ts ends the bin on one).
    const outcome = await cliInProcess(['run', ...args, '--quiet']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(message);
    expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
  });
});
