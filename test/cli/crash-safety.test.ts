import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE } from '../../src/config/checkpoint.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import {
  type Cli,
  cliWorkspace,
  outcomeContext as context,
  killCli,
  nonEmptyLines as lines,
  readJson,
  runCli,
  spawnCli,
  withTimeout,
} from '../helpers/integration-cli.ts';
import { childPids, endsWithin } from '../helpers/processes.ts';

/**
 * A run that survives its own faults, from the command line: checkpoints while it runs (one process,
 * worker threads with a tenant mix), one left behind by a run killed with SIGKILL and no server left
 * running after it, and outputs that cannot be written (one line in words, exit 73, the result kept
 * elsewhere). Bounds are wide: what they tell apart (a checkpoint or none, a server gone or still
 * serving) does not depend on a loaded machine's speed.
 */

/** Children at once: each start is ~1.5 s of CPU, and CI machines have 2 cores. */
const parallel = pLimit(2);
const TEST_TIMEOUT_MS = 120_000;
const fresh = cliWorkspace('crash-safety').fresh;
const SHARED_BROWSE = 'test/helpers/scenarios/shared-browse.ts';
const TENANT_BROWSE = 'test/helpers/scenarios/tenant-browse.ts';

/** The checkpoint in `out` once it exists and covers at least `seconds`, read while the CLI runs. */
async function checkpointOf(cli: Cli, out: string, seconds: number): Promise<RunResult> {
  const path = join(out, CHECKPOINT_FILE);
  const start = Date.now();
  while (Date.now() - start < 60_000) {
    if (cli.child.exitCode !== null) break;
    if (existsSync(path)) {
      const written = JSON.parse(readFileSync(path, 'utf8')) as RunResult;
      if (written.meta.durationSeconds >= seconds) return written;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no checkpoint of ${seconds} s\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`);
}

function expectCheckpoint(written: RunResult): void {
  expect(resultProblem(written)).toBeUndefined();
  expect(written.meta.partial).toBe(true);
  expect(written.meta.checkpoint).toBe(true);
  expect(written.overall.requests).toBeGreaterThan(0);
}

describe.concurrent('run writes checkpoints', () => {
  it.each([
    ['one process', [SHARED_BROWSE, '--duration', '6s']],
    ['worker threads and a tenant mix', [TENANT_BROWSE, '--workers', '2', '--duration', '6s']],
  ])(
    '%s: result.partial.json while it runs, valid and partial; gone once result.json is written',
    (what, args) =>
      parallel(async () => {
        const out = fresh('checkpoints');
        const cli = spawnCli(['run', ...args, '--checkpoint', '1s', '--out', out, '--quiet']);
        try {
          const written = await checkpointOf(cli, out, 2);
          expectCheckpoint(written);
          if (what.includes('tenant')) {
            expect(written.meta.workers).toBe(2);
            expect(written.byPlan?.free?.keys).toBe(6);
          }
          const { code } = await withTimeout(cli.exited, 60_000, 'the run');
          expect(code, cli.stderr()).toBe(0);
          // Renamed into place, each time: nothing half written is ever left beside them.
          expect(readdirSync(out).sort()).toEqual(['report.html', 'result.json']);
          const final = readJson(join(out, 'result.json')) as RunResult;
          expect(final.meta.partial).toBe(false);
          expect(final.meta.checkpoint).toBeUndefined();
        } finally {
          killCli(cli);
        }
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'killed by SIGKILL: its last checkpoint is valid and partial, and its server is gone within 10 s',
    () =>
      parallel(async () => {
        const out = fresh('killed');
        const cli = spawnCli(['run', '--duration', '60s', '--checkpoint', '1s', '--out', out, '--quiet']);
        try {
          await checkpointOf(cli, out, 2);
          const pid = cli.child.pid as number;
          const server = childPids(pid).find((child) =>
            readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('serve'),
          );
          expect(server, 'the embedded server among the run’s children').toBeDefined();
          // The run alone: its process group (and so the server) is left to fend for itself.
          process.kill(pid, 'SIGKILL');
          // The server exits on the event of its channel closing (tens of ms when measured), not on a
          // poll; untied, nothing would ever stop it. So what is proved does not hang on the bound,
          // and 10 s leaves a loaded machine room to schedule an exit.
          expect(
            await endsWithin(server as number, 10_000),
            'the server outlived the run by 10 s',
          ).toBeDefined();
          await withTimeout(cli.exited, 10_000, 'the killed run');
          expectCheckpoint(readJson(join(out, CHECKPOINT_FILE)) as RunResult);
          expect(existsSync(join(out, 'result.json'))).toBe(false);
        } finally {
          killCli(cli);
        }
      }),
    TEST_TIMEOUT_MS,
  );
});

describe.concurrent('an output that cannot be written', () => {
  it(
    'run --out under a file: one line in words, exit 73, the result and report in $TMPDIR',
    () =>
      parallel(async () => {
        const tmp = fresh('tmp');
        const blocker = join(fresh('blocked'), 'a-file');
        writeFileSync(blocker, 'not a directory');
        const out = join(blocker, 'run');
        const r = await runCli(['run', SHARED_BROWSE, '--duration', '2s', '--out', out, '--quiet'], 60_000, {
          TMPDIR: tmp,
        });
        expect(r.code, context(r)).toBe(73);
        const [line] = lines(r.stderr);
        expect(lines(r.stderr), context(r)).toHaveLength(1);
        expect(line).toMatch(
          /^petstore-load: cannot write the result to .*: a part of the path is a file, not a directory \(ENOTDIR\); it is in (.*)$/,
        );
        const kept = (/it is in (.*)$/.exec(line as string)?.[1] ?? '') as string;
        expect(kept.startsWith(join(tmp, 'petstore-load'))).toBe(true);
        expect(resultProblem(readJson(kept))).toBeUndefined();
        expect(existsSync(join(kept, '..', 'report.html'))).toBe(true);
        expect(r.stdout.trim()).toBe(kept);
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'run --junit under a file: one line, exit 73, result.json and report.html written where asked',
    () =>
      parallel(async () => {
        const out = fresh('junit');
        const blocker = join(out, 'a-file');
        writeFileSync(blocker, 'not a directory');
        const junit = join(blocker, 'junit.xml');
        const r = await runCli(
          ['run', SHARED_BROWSE, '--duration', '2s', '--out', out, '--junit', junit, '--quiet'],
          60_000,
        );
        expect(r.code, context(r)).toBe(73);
        expect(lines(r.stderr)).toEqual([
          `petstore-load: cannot write the JUnit XML to ${junit}: a part of the path is a file, not a directory (ENOTDIR)`,
        ]);
        expect(resultProblem(readJson(join(out, 'result.json')))).toBeUndefined();
        expect(existsSync(join(out, 'report.html'))).toBe(true);
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'bench --out under a file: one line, exit 73, the result in $TMPDIR',
    () =>
      parallel(async () => {
        const tmp = fresh('bench-tmp');
        const blocker = join(fresh('bench-blocked'), 'a-file');
        writeFileSync(blocker, 'not a directory');
        const r = await runCli(
          ['bench', '--duration', '1s', '--out', join(blocker, 'b'), '--quiet'],
          60_000,
          {
            TMPDIR: tmp,
          },
        );
        expect(r.code, context(r)).toBe(73);
        expect(lines(r.stderr), context(r)).toHaveLength(1);
        expect(r.stderr).toMatch(/cannot write the result to .*\(ENOTDIR\); it is in .*result\.json\n$/);
        expect(resultProblem(readJson(r.stdout.trim()))).toBeUndefined();
      }),
    TEST_TIMEOUT_MS,
  );
});
