import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { acceptsOnLoopback as accepts, stopChild } from './processes.ts';

const START_LIMIT_MS = 10_000;

/** Debian's tinyproxy on a loopback port of its own: a real HTTP proxy (CONNECT and plain forwarding). */
export interface RunningProxy {
  url: string;
  /** Its log: a line per connection it took, naming where each went. */
  log(): string;
  stop(): Promise<void>;
}

function binary(): string {
  for (const candidate of ['tinyproxy', '/usr/bin/tinyproxy', '/usr/sbin/tinyproxy'])
    if (!spawnSync(candidate, ['-v']).error) return candidate;
  throw new Error('tinyproxy is not installed (apt-get install -y tinyproxy): the proxy tests need it');
}

export async function startHttpProxy(): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-proxy-'));
  const port = await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  // No ConnectPort line: CONNECT to any port (the test targets' are random). Info logs each request.
  writeFileSync(
    join(dir, 'tinyproxy.conf'),
    `Port ${port}
Listen 127.0.0.1
Timeout 60
Allow 127.0.0.1
LogFile "${logFile}"
LogLevel Info
PidFile "${join(dir, 'tinyproxy.pid')}"
MaxClients 100
`,
  );
  const child = spawn(binary(), ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: 'ignore' });
  child.once('error', () => {});
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(child, port, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, log, stop };
}

async function waitFor(child: ChildProcess, port: number, log: () => string): Promise<void> {
  const deadline = Date.now() + START_LIMIT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`tinyproxy exited with ${child.exitCode ?? child.signalCode}: ${log().trim()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`tinyproxy did not accept connections within ${START_LIMIT_MS / 1000} s: ${log().trim()}`);
}
