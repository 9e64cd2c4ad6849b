import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort } from './free-port.ts';

/**
 * A real redis-server (Debian's package; `.ci/run` installs it) on a free loopback port, with
 * nothing written to disk, for the tests of the shared quota.
 */
export interface RedisProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisProcess> {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error(
      'redis-server is not installed (apt-get install -y redis-server): the shared-quota tests need it',
    );
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
