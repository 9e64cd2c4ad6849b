import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { acceptsOnLoopback as accepts, stopChild } from './processes.ts';

const NGINX_START_LIMIT_MS = 10_000;

/** Debian's nginx, started by a test on a loopback port of its own, in a directory of its own. */
export interface RunningNginx {
  port: number;
  /** The directory its config, logs and temp files live in (removed by `stop`). */
  dir: string;
  stop(): Promise<void>;
}

/** /usr/sbin is not on a non-root user's PATH on Debian, yet that is where the package puts nginx. */
function nginxBinary(): string {
  for (const candidate of ['nginx', '/usr/sbin/nginx'])
    if (!spawnSync(candidate, ['-v']).error) return candidate;
  throw new Error(
    'nginx is not installed (apt-get install -y nginx): the tests that put it in front of a target need it',
  );
}

/**
 * nginx with `http` holding the http block's contents (zones, servers) for `port`; `at(name)` is a
 * file in nginx's own directory, quoted for the config.
 */
export async function startNginx(
  http: (port: number, at: (name: string) => string) => string,
): Promise<RunningNginx> {
  const binary = nginxBinary();
  const dir = await mkdtemp(join(tmpdir(), 'petstore-nginx-'));
  const port = await freePort();
  const at = (name: string) => `"${join(dir, name)}"`;
  const errorLog = join(dir, 'error.log');
  // One process, no master: nothing forks or switches user (as root the worker would become nobody,
  // who cannot enter the 0700 temp dir), and SIGTERM ends the one process there is.
  const config = `daemon off;
master_process off;
pid ${at('nginx.pid')};
error_log ${at('error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${at('client_body')};
  proxy_temp_path ${at('proxy')};
  fastcgi_temp_path ${at('fastcgi')};
  uwsgi_temp_path ${at('uwsgi')};
  scgi_temp_path ${at('scgi')};
  ${http(port, at)}
}
`;
  await writeFile(join(dir, 'nginx.conf'), config);
  const child = spawn(binary, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', errorLog], {
    stdio: 'ignore',
  });
  // A spawn that fails leaves no pid, which waitForNginx reports; unheard, the event would crash the run.
  child.once('error', () => {});
  const stop = async () => {
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForNginx(child, port, errorLog);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, dir, stop };
}

async function waitForNginx(child: ChildProcess, port: number, errorLog: string): Promise<void> {
  const deadline = Date.now() + NGINX_START_LIMIT_MS;
  const failure = async (why: string) => {
    const log = await readFile(errorLog, 'utf8').catch(() => '(no error log)');
    return new Error(`nginx ${why}: ${log.trim()}`);
  };
  while (Date.now() < deadline) {
    if (child.pid === undefined) throw await failure('could not be started');
    if (child.exitCode !== null || child.signalCode !== null)
      throw await failure(`exited with ${child.exitCode ?? child.signalCode}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw await failure(`did not accept connections within ${NGINX_START_LIMIT_MS / 1000} s`);
}

/**
 * `proxy_pass` with no path passes the request's URI unchanged; with one, it replaces the location's
 * `/` by it, which puts the upstream's path in front of the request's.
 */
export function proxyTarget(upstream: string): string {
  const url = new URL(upstream);
  if (url.protocol !== 'http:' || url.search || url.hash || /[\s;{}"'\\]/.test(upstream))
    throw new Error(`nginx upstream ${upstream}: want a plain http:// URL`);
  const path = url.pathname.replace(/\/+$/, '');
  return path ? `${url.origin}${path}/` : url.origin;
}
