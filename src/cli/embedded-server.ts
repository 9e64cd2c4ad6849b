import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnTied } from './tied-child.ts';

const CLI = fileURLToPath(new URL('../../bin/petstore-load.js', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the reference server (`petstore-load serve`) in its own process: the embedded default target
 * of `run` and the target of the benchmarks. A process of its own, not an import, so that the
 * generator and the server do not share one event loop (on a 2-core machine each gets a core) and the
 * load side never depends on the server's code. `env`: variables added to this process's environment
 * for the child, e.g. the tenant-key seed (TENANT_SEED_ENV), which must never be on its command line.
 * Tied to this process (spawnTied): it exits when this one dies, even by SIGKILL.
 */
export function spawnServer(args: string[], env?: Readonly<Record<string, string>>): Promise<ServerProcess> {
  const child = spawnTied(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`server did not start in 20 s: ${output}`)), 20_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    const onEarlyExit = (code: number | null) => fail(new Error(`server exited with ${code}: ${output}`));
    child.once('exit', onEarlyExit);
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.removeListener('exit', onEarlyExit);
      resolve({
        url: match[1] as string,
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
