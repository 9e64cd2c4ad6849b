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
import { childPids, endsWithin, processEnded } from '../helpers/processes.ts';

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
          const server = serverOf(pid);
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

/** The processes still in a CLI's process group (it leads its own): any server it started stays in it. */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // Field 5 of stat is the process group; the command name before it may hold spaces.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid;
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter((pid) => !processEnded(pid));
}

describe.concurrent('an output that cannot be written', () => {
  it.each([
    [
      'procfs, where mkdir answers ENOENT under a directory that exists',
      () => '/proc/petstore-load-x',
      'the file system makes no directory there (ENOENT)',
    ],
    [
      'a path under a file',
      () => join(blockerFile(), 'run'),
      'a part of the path is a file, not a directory (ENOTDIR)',
    ],
  ])(
    'run --out on %s: exit 73 in one line before anything starts, no process left, nothing kept',
    (_, outOf, words) =>
      parallel(async () => {
        const tmp = fresh('tmp');
        const out = outOf();
        const cli = spawnCli(['run', SHARED_BROWSE, '--duration', '2s', '--out', out], { TMPDIR: tmp });
        const started = Date.now();
        try {
          // Before, Node's recursive mkdir spun on /proc for ever: a bound, not a hang, is what fails.
          const { code } = await withTimeout(cli.exited, 30_000, 'the refused run');
          const elapsedMs = Date.now() - started;
          expect(code, cli.stderr()).toBe(73);
          expect(lines(cli.stderr())).toEqual([
            `petstore-load: cannot write to --out ${out}: ${words}; nothing was started or sent`,
          ]);
          expect(cli.stdout()).toBe('');
          // A CLI start is ~1.5 s of CPU through tsx; a run, its server and its setup would be seconds more.
          expect(elapsedMs).toBeLessThan(5_000);
          // Nothing was started; a helper of the CLI's own start (tsx's esbuild, where the sources
          // run) may outlive it by moments, so the group is given a few seconds to empty.
          const pid = cli.child.pid as number;
          await until(() => groupMembers(pid).length === 0, 5_000, 'its process group').catch(() => {});
          expect(groupMembers(pid)).toEqual([]);
          expect(existsSync(join(tmp, 'petstore-load'))).toBe(false);
        } finally {
          killCli(cli);
        }
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'run --out that becomes unwritable during the run: one line in words, exit 73, the result and report in $TMPDIR',
    () =>
      parallel(async () => {
        const tmp = fresh('tmp');
        const parent = join(fresh('blocked'), 'later-a-file');
        const out = join(parent, 'run');
        const cli = spawnCli(['run', SHARED_BROWSE, '--duration', '3s', '--out', out, '--quiet'], {
          TMPDIR: tmp,
        });
        try {
          // Its server is started after --out was tried: from then on the run is under way.
          await until(() => serverOf(cli.child.pid as number) !== undefined, 30_000, 'the embedded server');
          writeFileSync(parent, 'not a directory');
          const { code } = await withTimeout(cli.exited, 60_000, 'the run');
          const r = { code, signal: null, stdout: cli.stdout(), stderr: cli.stderr() };
          expect(code, context(r)).toBe(73);
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
        } finally {
          killCli(cli);
        }
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
    'bench --out under a file: exit 73 in one line before the bench starts',
    () =>
      parallel(async () => {
        const out = join(blockerFile(), 'b');
        const r = await runCli(['bench', '--duration', '1s', '--out', out, '--quiet'], 60_000);
        expect(r.code, context(r)).toBe(73);
        expect(lines(r.stderr)).toEqual([
          `petstore-load: cannot write to --out ${out}: a part of the path is a file, not a directory (ENOTDIR); nothing was started or sent`,
        ]);
      }),
    TEST_TIMEOUT_MS,
  );
});

/** A regular file in a fresh directory: no user, root included, may write under it. */
function blockerFile(): string {
  const blocker = join(fresh('blocked'), 'a-file');
  writeFileSync(blocker, 'not a directory');
  return blocker;
}

/** The embedded server among a run's children (tsx's esbuild may be another). */
function serverOf(pid: number): number | undefined {
  return childPids(pid).find((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('serve');
    } catch {
      return false;
    }
  });
}

/** Waits until `ready()` holds, polled every 50 ms. */
async function until(ready: () => boolean, ms: number, what: string): Promise<void> {
  const start = Date.now();
  while (!ready()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
