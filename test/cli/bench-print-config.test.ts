import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { killAllClis, runCli } from '../helpers/integration-cli.ts';

/**
 * `bench --print-config` as a user runs it: the resolved settings on stdout, exit 0, and nothing
 * sent to the target named (a server of the test's own counts every request it gets).
 */

const KEY = 'print-config-secret-7f3a';
let server: Server;
let requests = 0;
let baseUrl = '';

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  killAllClis();
  await new Promise((done) => server.close(done));
});

describe('petstore-load bench --print-config', () => {
  it('prints the resolved settings, the key as where it came from, and sends nothing', async () => {
    const out = await runCli(
      [
        'bench',
        '--base-url',
        `${baseUrl}/api`,
        '--auth-header',
        'X-Api-Key',
        '--rate',
        '300',
        '--duration',
        '2m',
        '--connections',
        '4',
        '--operations',
        'getPetById:2,listPets',
        '--threshold',
        'p99<50ms',
        '--print-config',
      ],
      30_000,
      { PETSTORE_API_KEY: KEY },
    );
    expect(out.code, out.stderr).toBe(0);
    const config = JSON.parse(out.stdout);
    expect(config).toMatchObject({
      durationMs: 120_000,
      rate: 300,
      connections: 4,
      embedded: false,
      target: `${baseUrl}/api`,
      apiKey: 'from PETSTORE_API_KEY',
      auth: { in: 'header', name: 'x-api-key', bearer: false, from: '--auth-header' },
      mix: [
        { operationId: 'getPetById', weight: 2 },
        { operationId: 'listPets', weight: 1 },
      ],
    });
    expect(config.thresholds.map((t: { expression: string }) => t.expression)).toEqual(['p99<50ms']);
    expect(`${out.stdout}${out.stderr}`).not.toContain(KEY);
    expect(requests).toBe(0);
  });

  it('without --base-url: the embedded server is named, not started, and its key not shown', async () => {
    const out = await cliInProcess(['bench', '--print-config']);
    expect(out.code, out.stderr).toBe(0);
    const config = JSON.parse(out.stdout);
    expect(config.embedded).toBe(true);
    expect(config.apiKey).toMatch(/^from /);
    expect(out.stdout).not.toContain('enterprise-demo-key');
    expect(config.auth).toMatchObject({ in: 'header', name: 'authorization', bearer: true });
    expect(out.stderr).toBe('');
  });

  // Every row names the counting server as its target (all but the keyless one with a key), so
  // that a request sent before the refusal would show in `requests`.
  it.each([
    [
      ['--base-url', 'TARGET', '--api-key', 'k', '--duration', '10'],
      /^petstore-load: --duration: '10' is not a duration/,
    ],
    [
      ['--base-url', 'TARGET', '--api-key', 'k', '--auth-header', 'X Api'],
      /^petstore-load: --auth-header: 'X Api' is not a header name/,
    ],
    [['--base-url', 'TARGET'], /^petstore-load: --base-url needs --api-key KEY/],
    [
      ['--base-url', 'TARGET', '--api-key', 'k', '--rate', '1.5'],
      /^petstore-load: --rate: '1.5' is not a rate/,
    ],
  ])('refuses %j in one line with exit 2, before anything is sent', async (flags, message) => {
    const args = flags.map((f) => (f === 'TARGET' ? `${baseUrl}/api` : f));
    const out = await cliInProcess(['bench', ...args, '--print-config'], { PETSTORE_API_KEY: undefined });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(message);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stdout).toBe('');
    expect(requests).toBe(0);
  });
});
