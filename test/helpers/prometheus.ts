import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/**
 * A real Prometheus (Debian's package; `.ci/run` installs it) on a free loopback port, with the
 * remote-write receiver on, no scrape jobs and its TSDB in a temporary directory removed on stop.
 * Without the binary, tests skip locally and fail in CI (CI set), which must run them.
 */

export const PROMETHEUS = '/usr/bin/prometheus';
export const HAVE_PROMETHEUS = existsSync(PROMETHEUS);
export const SKIP_PROMETHEUS = !HAVE_PROMETHEUS && !process.env.CI;

export interface PrometheusProcess {
  url: string;
  /** The remote-write endpoint. */
  writeUrl: string;
  child: ChildProcess;
  /** Its output so far, for a failing test's message. */
  output(): string;
  /** An instant query's vector: each result's labels and value. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Label sets of every series matching `match`. */
  series(match: string): Promise<Record<string, string>[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(): Promise<PrometheusProcess> {
  if (!HAVE_PROMETHEUS)
    throw new Error(
      `${PROMETHEUS} is not installed (apt-get install -y prometheus): the metrics tests need it`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'petstore-load-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, 'global:\n  scrape_interval: 1m\nscrape_configs: []\n');
  const port = await freePort();
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  const api = async (path: string, params: Record<string, string>) => {
    const response = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    const body = (await response.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    url,
    writeUrl: `${url}/api/v1/write`,
    child,
    output: () => output,
    query: async (promql) => {
      const data = (await api('/api/v1/query', { query: promql })) as {
        result: { metric: Record<string, string>; value: [number, string] }[];
      };
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    series: async (match) => (await api('/api/v1/series', { 'match[]': match })) as Record<string, string>[],
    stop,
  };
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${output()}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prometheus not ready within 20 s: ${output()}`);
}
