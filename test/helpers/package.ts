import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO } from './integration-cli.ts';

/** A command's outcome: its exit code and both outputs (never thrown on a non-zero exit). */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Process groups started by run() and not yet ended: stopRunning() kills them (a file's afterAll). */
const running = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** Kills every command run() started that still runs, with all its process group. */
export function stopRunning(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

/**
 * Runs a command to its end (bounded by `ms`, past which its whole process group is killed: npx, the
 * CLI under it and the CLI's embedded server), in `cwd`, with `env` over this process's, or `env`
 * alone with `exactEnv` (a CI runner's environment, built whole).
 */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  ms = 120_000,
  exactEnv = false,
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: exactEnv ? env : { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n(timed out after ${ms} ms: ${[command, ...args].join(' ')})`;
      if (pid !== undefined) killGroup(pid);
    }, ms);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/**
 * The package as `npm pack` makes it (its prepack: the packed manifest, the build), packed from a
 * copy of this checkout beside the node_modules it has, so that the build it runs never replaces the
 * build/ that other test files' CLIs run from. Returns the tarball's path, in `into`.
 */
export async function packTarball(into: string): Promise<string> {
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], REPO);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const staging = mkdtempSync(join(tmpdir(), 'petstore-load-pack-'));
  try {
    for (const file of listed.stdout.split('\0').filter(Boolean)) {
      mkdirSync(dirname(join(staging, file)), { recursive: true });
      try {
        copyFileSync(join(REPO, file), join(staging, file));
      } catch {
        // Listed but gone (deleted in the work tree, not yet committed): not part of the package.
      }
    }
    // A pack under way in the checkout has its manifest stripped for the moment: pack the whole one.
    const noted = join(REPO, '.package.json.unpacked');
    if (existsSync(noted)) {
      copyFileSync(noted, join(staging, '.package.json.unpacked'));
      await run('node', ['scripts/pack-manifest.mjs', 'restore'], staging);
    }
    symlinkSync(join(REPO, 'node_modules'), join(staging, 'node_modules'), 'dir');
    mkdirSync(into, { recursive: true });
    const packed = await run('npm', ['pack', '--json', '--pack-destination', into], staging);
    if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr.slice(-2000)}`);
    const [packedFile] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
    }[];
    if (!packedFile) throw new Error(`npm pack named no tarball: ${packed.stdout.slice(0, 500)}`);
    return join(into, packedFile.filename);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A user's project outside the checkout: an ES module package with nothing installed yet. */
export function userProject(dir: string, name = 'user-project'): string {
  mkdirSync(join(dir, 'load'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  return dir;
}

/** npm's flags for installs from the cache that `npm ci` filled: no audit, no funding notes. */
export const QUIET_INSTALL = ['--prefer-offline', '--no-audit', '--no-fund'];
