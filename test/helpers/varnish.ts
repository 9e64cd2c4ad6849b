import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { acceptsOnLoopback as accepts, stopChild } from './processes.ts';

/** varnishd compiles its VCL with the C compiler before it listens: about half a second, more when loaded. */
const VARNISH_START_LIMIT_MS = 20_000;

/** Debian's varnishd, started by a test on a loopback port of its own, in a working directory of its own. */
export interface RunningVarnish {
  port: number;
  /** The manager process; its one child (the cache process) ends with it. */
  pid: number;
  stop(): Promise<void>;
}

/** /usr/sbin is not on a non-root user's PATH on Debian, yet that is where the package puts varnishd. */
function varnishBinary(): string {
  for (const candidate of ['varnishd', '/usr/sbin/varnishd'])
    if (!spawnSync(candidate, ['-V']).error) return candidate;
  throw new Error(
    'varnishd is not installed (apt-get install -y varnish varnish-modules): the tests that put it in front of a target need it',
  );
}

/**
 * varnishd in the foreground (`-F`) with `vcl(port)` as its VCL, listening on 127.0.0.1 only. It
 * stays root (`-j none`: its jail would switch to a user who cannot enter the 0700 temp dir), keeps
 * no management port (`-T none`), and is kept small: 16 MB of cache, 2 MB of shared log, a few threads.
 */
export async function startVarnish(vcl: (port: number) => string): Promise<RunningVarnish> {
  const binary = varnishBinary();
  const dir = await mkdtemp(join(tmpdir(), 'petstore-varnish-'));
  const port = await freePort();
  const vclFile = join(dir, 'limiter.vcl');
  await writeFile(vclFile, vcl(port));
  const args = [
    '-F',
    '-j',
    'none',
    '-T',
    'none',
    '-n',
    join(dir, 'work'),
    '-a',
    `127.0.0.1:${port}`,
    '-f',
    vclFile,
    '-s',
    'malloc,16m',
    '-l',
    '2m',
    '-p',
    'thread_pools=1',
    '-p',
    'thread_pool_min=5',
    '-p',
    'thread_pool_max=100',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // It says why it did not start (a VCL that does not compile, a port taken) on its output.
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  // A spawn that fails leaves no pid, reported below; unheard, the event would crash the run.
  child.once('error', () => {});
  const stop = async () => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + VARNISH_START_LIMIT_MS;
    for (;;) {
      if (child.pid === undefined) throw new Error('varnishd could not be started');
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`varnishd exited with ${child.exitCode ?? child.signalCode}: ${output.trim()}`);
      if (await accepts(port)) break;
      if (Date.now() > deadline)
        throw new Error(
          `varnishd did not accept connections within ${VARNISH_START_LIMIT_MS / 1000} s: ${output.trim()}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, pid: child.pid, stop };
}
