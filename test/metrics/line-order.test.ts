import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/integration-cli.ts';

/**
 * Where the metrics line stands in what a reader sees, stdout and stderr in one stream as in a
 * terminal: the push is stopped (and its line printed) before result.json is written, so that the
 * last push's totals are the result's and the run id is in it; the summary follows. The README says
 * so; this holds it to it.
 */

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-metrics-order-'));
let sink: Server;
let url: string;
/** Plain spawn (a file descriptor for both streams); killed here if the test ends first. */
let child: ChildProcess | undefined;

beforeAll(async () => {
  // Takes every push: the line reports what was pushed, which is all this test reads.
  sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/api/v1/write`;
});

afterAll(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await new Promise((resolve) => sink.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('run --metrics: the metrics line in the output', () => {
  it('comes before the summary, after the run', async () => {
    const log = join(dir, 'output.txt');
    const fd = openSync(log, 'w');
    const args = ['run', '--duration', '2s', '--metrics', `prometheus=${url}`, '--out', join(dir, 'out')];
    child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO,
      // One file for both: their lines land in the order written.
      stdio: ['ignore', fd, fd],
      env: { ...process.env, NO_COLOR: '1' },
    });
    const code = await new Promise<number | null>((resolve) => child?.on('close', resolve));
    closeSync(fd);
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    const context = lines.join('\n');
    const metrics = lines.findIndex((l) =>
      /^petstore-load: metrics: pushed [1-9]\d* samples to prometheus/.test(l),
    );
    // The summary's first line: `<scenario> against <target> ..., plan <plan>, <n> s`.
    const summary = lines.findIndex((l) => /^\S+ against \S+.*, plan \S+, /.test(l));
    expect(code, context).toBeLessThanOrEqual(1);
    expect(metrics, context).toBeGreaterThanOrEqual(0);
    expect(summary, context).toBeGreaterThan(metrics);
    expect(
      lines.filter((l) => l.includes('metrics:')),
      context,
    ).toHaveLength(1);
  }, 60_000);
});
