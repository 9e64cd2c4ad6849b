import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { spawnTied } from '../../src/cli/tied-child.ts';

/**
 * `petstore-load` as a child process (bin/petstore-load.js through tsx, ~1.5 s a start), for the
 * tests of the CLI. Each child leads its own process group, so that `killCli` (SIGKILL to the group,
 * by the child's pid) also stops a reference server it spawned itself; tests call it in `finally`
 * and `killAllClis` in `afterAll`. Tied to the test's process (spawnTied): a test runner killed
 * outright leaves no CLI running.
 */

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(REPO, 'bin', 'petstore-load.js');

export interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface CliOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const running = new Set<Cli>();

/**
 * `within`: a command that runs the CLI somewhere else, as its argument list ends (`ip netns exec
 * NS`): the CLI's node is exec'd in its place, the same pid, its tie to this process kept.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  within: string[] = [],
  nodeArgs: string[] = [],
  cwd: string = REPO,
): Cli {
  const [command, ...prefix] = [...within, process.execPath];
  const child = spawnTied(command as string, [...prefix, ...nodeArgs, BIN, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  // 'close', not 'exit': by then all of stdout and stderr has been read.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const cli: Cli = { child, stdout: () => out, stderr: () => err, exited };
  running.add(cli);
  void exited.then(() => running.delete(cli));
  return cli;
}

/**
 * SIGKILL to the child's process group (the child's pid): the child and any server it spawned. Quiet
 * when the group is gone already.
 */
export function killCli(cli: Cli): void {
  const pid = cli.child.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // No such group any more.
  }
}

export function killAllClis(): void {
  for (const cli of running) killCli(cli);
  running.clear();
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs a command that should end on its own within `ms`; kills it (by pid) whatever happens. `cwd`:
 * the folder it runs in, as a user's shell would be (default this repository).
 */
export async function runCli(
  args: string[],
  ms: number,
  env: Record<string, string | undefined> = {},
  nodeArgs: string[] = [],
  cwd: string = REPO,
): Promise<CliOutcome> {
  const cli = spawnCli(args, env, [], nodeArgs, cwd);
  try {
    const { code, signal } = await withTimeout(cli.exited, ms, `petstore-load ${args.join(' ')}`);
    return { code, signal, stdout: cli.stdout(), stderr: cli.stderr() };
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`);
  } finally {
    killCli(cli);
  }
}

/** Every file under `dir`, recursively, with its content. */
export function readTree(dir: string): { path: string; content: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, content: readFileSync(path, 'utf8') };
    });
}

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/**
 * A test file's temporary directory for its CLI runs, made before its tests and removed after them
 * (every CLI still running killed first): `fresh(name)` gives each run a directory of its own.
 */
export function cliWorkspace(prefix: string): { fresh(name: string): string } {
  let dir: string | undefined;
  let counter = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `petstore-load-${prefix}-`));
  });
  afterAll(() => {
    killAllClis();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    fresh(name: string): string {
      const path = join(dir as string, `${name}-${++counter}`);
      mkdirSync(path, { recursive: true });
      return path;
    },
  };
}

/** A CLI outcome as an assertion's message: its exit code and both outputs. */
export const outcomeContext = (r: CliOutcome) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** The lines of an output that are not blank. */
export const nonEmptyLines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');
