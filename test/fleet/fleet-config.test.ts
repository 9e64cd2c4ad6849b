import { describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.ts';

/**
 * `--fleet` resolved before anything connects: its refusals, one line and exit 2 each, and the shard
 * it resolves to from `--shard` or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based).
 */
const BASE = ['run', 'catalogue-browse', '--base-url', 'http://127.0.0.1:9'];
const STORE = ['--quota-store', 'redis://127.0.0.1:9'];

async function refused(args: string[], words: string, env: Record<string, string> = {}) {
  const outcome = await cliInProcess([...BASE, ...args], env);
  expect(outcome.code, outcome.stderr).toBe(2);
  expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
  expect(outcome.stderr).toContain(words);
  expect(outcome.stdout).toBe('');
}

async function printed(args: string[], env: Record<string, string> = {}) {
  const outcome = await cliInProcess([...BASE, ...args, '--print-config'], env);
  expect(outcome.code, outcome.stderr).toBe(0);
  return JSON.parse(outcome.stdout) as { shard?: string; fleet?: Record<string, unknown> };
}

describe('--fleet refused before anything connects', () => {
  it('needs --quota-store, --generators and --base-url, and agrees with --shard', async () => {
    await refused(['--fleet', 'f', '--generators', '3'], '--fleet needs --quota-store');
    await refused(['--fleet', 'f', ...STORE], '--fleet needs --generators N');
    await refused(['--generators', '3'], '--generators needs --fleet');
    await refused(
      ['--fleet', 'f', '--generators', '3', ...STORE, '--shard', '1/2'],
      'disagrees with --generators 3',
    );
    await refused(['--fleet', 'a b', '--generators', '3', ...STORE], 'is not a name');
    await refused(
      ['--fleet', 'f', '--generators', '3', ...STORE, '--workers', '2'],
      'cannot be used with --workers',
    );
    await refused(['--fleet', 'f', '--generators', '3', ...STORE], 'JOB_COMPLETION_INDEX=3 is not an index', {
      JOB_COMPLETION_INDEX: '3',
    });
    const embedded = await cliInProcess([
      'run',
      'catalogue-browse',
      '--fleet',
      'f',
      '--generators',
      '2',
      ...STORE,
    ]);
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toContain('--fleet needs --base-url');
  });
});

describe('the shard a fleet generator resolves to', () => {
  it("is the Job's index + 1 of N, or --shard's, or the store's to give at start", async () => {
    const fleet = ['--fleet', 'nightly-42', '--generators', '3', ...STORE];
    const job = await printed(fleet, { JOB_COMPLETION_INDEX: '2' });
    expect(job.shard).toBe('3/3');
    expect(job.fleet).toMatchObject({
      name: 'nightly-42',
      generators: 3,
      index: 3,
      indexFrom: 'JOB_COMPLETION_INDEX',
    });
    expect((await printed([...fleet, '--shard', '2/3'])).fleet).toMatchObject({
      index: 2,
      indexFrom: '--shard',
    });
    const claimed = await printed(fleet);
    expect(claimed.shard).toBeUndefined();
    expect(claimed.fleet).toMatchObject({ indexFrom: 'the store', waitMs: 60_000, ttlSeconds: 86_400 });
  });
});
