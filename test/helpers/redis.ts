import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.ts';

/**
 * A real redis-server (Debian's package; `.ci/run` installs it) on a free loopback port, with
 * nothing written to disk, for the tests of the shared quota.
 */
export interface RedisProcess {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `port`: a given one (a store restarted where the generators knew it); `args`: more of
 * redis-server's flags (`--replicaof`), or a Sentinel's configuration file and `--sentinel`.
 */
export async function startRedis(
  o: { port?: number; args?: string[]; config?: string } = {},
): Promise<RedisProcess> {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error(
      'redis-server is not installed (apt-get install -y redis-server): the shared-quota tests need it',
    );
  const port = o.port ?? (await freePort());
  const flags = o.config
    ? [o.config, '--sentinel', '--port', String(port), '--bind', '127.0.0.1']
    : [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ];
  const child = spawn('redis-server', [...flags, ...(o.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      if (/Ready to accept connections|Sentinel ID is/.test(output)) {
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
    port,
    child,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** A master, a replica of it and a Sentinel watching them that fails over within about 2 s of the master's end. */
export interface SentinelGroup {
  /** `redis+sentinel://127.0.0.1:PORT/petstore`, as `--quota-store` takes it. */
  url: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinel: RedisProcess;
  /** Resolves once the Sentinel names the replica the master. */
  promoted(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

const MASTER_NAME = 'petstore';

export async function startSentinelGroup(): Promise<SentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-load-sentinel-'));
  // A replica's first sync writes the master's data to a file in its directory: not the test's.
  const master = await startRedis({ args: ['--dir', dir, '--dbfilename', 'master.rdb'] });
  const replica = await startRedis({
    args: ['--dir', dir, '--dbfilename', 'replica.rdb', '--replicaof', '127.0.0.1', String(master.port)],
  });
  const config = join(dir, 'sentinel.conf');
  // Sentinel rewrites its configuration file as it learns: it must be its own, and writable.
  writeFileSync(
    config,
    [
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
      `sentinel failover-timeout ${MASTER_NAME} 4000`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
      '',
    ].join('\n'),
  );
  const sentinel = await startRedis({ config });
  const ask = new Redis(sentinel.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
  ask.on('error', () => undefined);
  const masterPort = async () =>
    Number(((await ask.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as string[] | null)?.[1]);
  const until = async (what: string, timeoutMs: number, ok: () => Promise<boolean>) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`sentinel group: ${what} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const stopAll = async () => {
    ask.disconnect();
    await Promise.all([sentinel.stop(), replica.stop(), master.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ask.connect();
    // A failover needs the Sentinel to know the replica, and the replica to hold the master's data.
    await until('the sentinel did not find the replica', 15_000, async () => {
      const replicas = (await ask.call('SENTINEL', 'replicas', MASTER_NAME)) as string[][];
      return replicas.some((r) => r.includes(String(replica.port)) && !r.join(' ').includes('s_down'));
    });
  } catch (error) {
    await stopAll();
    throw error;
  }
  return {
    url: `redis+sentinel://127.0.0.1:${sentinel.port}/${MASTER_NAME}`,
    master,
    replica,
    sentinel,
    promoted: (timeoutMs) =>
      until('the replica was not promoted', timeoutMs, async () => (await masterPort()) === replica.port),
    stop: stopAll,
  };
}
