import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNVERIFIED_LINE } from '../../src/report/network.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { type RunningProxy, startHttpProxy } from '../helpers/http-proxy.ts';
import {
  type CliOutcome,
  cliWorkspace,
  outcomeContext as context,
  readJson,
  runCli,
} from '../helpers/integration-cli.ts';
import {
  makeCertificates,
  startTlsFront,
  type TestCertificates,
  type TlsFront,
} from '../helpers/tls-target.ts';

/**
 * The reference server behind Debian's nginx terminating TLS (certificates made by openssl for the
 * test), as users' targets are: a private CA, a self-signed certificate, HTTP/2 offered, a client
 * certificate required; and Debian's tinyproxy in front of it. Everything through the real CLI.
 */

const SCENARIO = join('test', 'helpers', 'scenarios', 'shared-browse.ts');
const PASSPHRASE = 'tls test phrase';
/** Each child is a second or two of a core to start; CI has 2 cores. */
const parallel = pLimit(3);
const RUN_LIMIT_MS = 60_000;
const KEYS = 32;
let keysUsed = 0;

let certs: TestCertificates;
let server: RunningServer;
let caSigned: TlsFront;
/** The --http2 test's alone, so that its access log holds that run's requests only. */
let h2: TlsFront;
let selfSigned: TlsFront;
let mutual: TlsFront;
let proxy: RunningProxy;
const freshDir = cliWorkspace('tls').fresh;

beforeAll(async () => {
  certs = makeCertificates(PASSPHRASE);
  // A key per run: runs side by side on one key would share its quota and meet each other's 429s.
  const keys = Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`pro-${i + 1}`, 'pro']));
  server = await startServer({ timeScale: 10, keys: { ...keys, 'enterprise-demo-key': 'enterprise' } });
  [caSigned, h2, selfSigned, mutual, proxy] = await Promise.all([
    startTlsFront({ upstream: server.url, cert: certs.server, http2: true }),
    startTlsFront({ upstream: server.url, cert: certs.server, http2: true }),
    startTlsFront({ upstream: server.url, cert: certs.selfSigned }),
    startTlsFront({ upstream: server.url, cert: certs.server, clientCa: certs.ca }),
    startHttpProxy(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([
    caSigned?.stop(),
    h2?.stop(),

    selfSigned?.stop(),
    mutual?.stop(),
    proxy?.stop(),
  ]);
  await server?.close();
  certs?.remove();
});

/** A 2 s run of a read-only scenario at the pro plan's pace (time scale 10, as the server runs). */
function run(
  target: string,
  flags: string[],
  env: Record<string, string> = {},
  vus = 2,
): Promise<CliOutcome & { out: string }> {
  const out = freshDir('run');
  const args = [
    'run',
    SCENARIO,
    '--base-url',
    target,
    '--api-key',
    `pro-${(keysUsed++ % KEYS) + 1}`,
    '--plan',
    'pro',
    '--time-scale',
    '10',
    '--vus',
    String(vus),
    '--duration',
    '2s',
    '--out',
    out,
    ...flags,
  ];
  return parallel(async () => ({ ...(await runCli(args, RUN_LIMIT_MS, env)), out }));
}

function resultOf(r: CliOutcome & { out: string }): RunResult {
  const result = readJson(join(r.out, 'result.json')) as RunResult;
  expect(resultProblem(result)).toBeUndefined();
  return result;
}

function expectNoErrors(result: RunResult, context: string): void {
  expect(result.overall.requests, context).toBeGreaterThan(10);
  expect(result.overall.transportErrors, context).toEqual({});
  expect(
    Object.keys(result.overall.statuses).every((s) => Number(s) < 400),
    context,
  ).toBe(true);
}

/** One line on stderr, in words, never a stack. */
function expectOneLine(r: CliOutcome, words: RegExp): void {
  expect(r.stderr, context(r)).toMatch(words);
  expect(r.stderr, context(r)).not.toMatch(/\n\s+at |Error:/);
}

describe.concurrent('run against an https target', () => {
  it('a self-signed certificate and no flag: exit 3 in words with the flags for it, before any request', async () => {
    const r = await run(selfSigned.url, []);
    expect(r.code, context(r)).toBe(3);
    expectOneLine(
      r,
      /failed TLS: the target's certificate is self-signed: trust it with --ca FILE \(its PEM\), or skip verification with --insecure \(DEPTH_ZERO_SELF_SIGNED_CERT\)/,
    );
    expect(selfSigned.protocols()).toEqual([]);
  });

  it('a certificate of a private CA: exit 3 without --ca; with it, 0 errors over HTTP/1.1', async () => {
    const [refused, trusted] = await Promise.all([
      run(caSigned.url, []),
      run(caSigned.url, ['--ca', certs.ca]),
    ]);
    expect(refused.code, context(refused)).toBe(3);
    expectOneLine(refused, /signed by a CA this machine does not trust: give that CA with --ca FILE/);
    expect(trusted.code, context(trusted)).toBe(0);
    const result = resultOf(trusted);
    expectNoErrors(result, context(trusted));
    expect(result.config.network).toEqual({ ca: true });
    expect(result.overall.protocols).toEqual({ 'HTTP/1.1': result.overall.requests });
  });

  it('--insecure: 0 errors, and the summary, report and markdown each say in one line that nothing was verified', async () => {
    const md = join(freshDir('md'), 'summary.md');
    const r = await run(selfSigned.url, ['--insecure', '--summary-md', md]);
    expect(r.code, context(r)).toBe(0);
    expectNoErrors(resultOf(r), context(r));
    expect(r.stdout.split('\n').filter((line) => line === UNVERIFIED_LINE)).toHaveLength(1);
    expect(readFileSync(join(r.out, 'report.html'), 'utf8')).toContain('data-insecure="true"');
    expect(readFileSync(md, 'utf8')).toContain(UNVERIFIED_LINE);
  });

  it('--http2: every response over HTTP/2, as the result and nginx both count them, with 0 429s', async () => {
    const r = await run(h2.url, ['--ca', certs.ca, '--http2']);
    expect(r.code, context(r)).toBe(0);
    const result = resultOf(r);
    expectNoErrors(result, context(r));
    expect(result.overall.rateLimited).toBe(0);
    expect(result.overall.protocols).toEqual({ 'HTTP/2': result.overall.requests });
    expect(r.stdout).toMatch(
      new RegExp(
        `^protocols: HTTP/2 ${result.overall.requests}, HTTP/1.1 0 responses \\(h2 offered\\)$`,
        'm',
      ),
    );
    const seen = h2.protocols();
    expect(seen.length).toBeGreaterThanOrEqual(result.overall.requests);
    expect(new Set(seen)).toEqual(new Set(['HTTP/2.0']));
  });

  it('--workers 2: every thread reaches the target as the main thread would, over HTTP/2 with --ca', async () => {
    const r = await run(h2.url, ['--ca', certs.ca, '--http2', '--workers', '2']);
    expect(r.code, context(r)).toBe(0);
    const result = resultOf(r);
    expectNoErrors(result, context(r));
    expect(result.meta.workers).toBe(2);
    expect(result.overall.protocols).toEqual({ 'HTTP/2': result.overall.requests });
  });

  it('a client certificate required: with --cert and --key (its passphrase from the environment) 0 errors; without one, or with a stranger, exit 3 in words', async () => {
    const [given, none, stranger] = await Promise.all([
      run(
        mutual.url,
        [
          '--ca',
          certs.ca,
          '--cert',
          certs.client.cert,
          '--key',
          certs.client.key,
          '--key-passphrase-env',
          'TLS_KEY_PW',
        ],
        { TLS_KEY_PW: PASSPHRASE },
      ),
      run(mutual.url, ['--ca', certs.ca]),
      run(mutual.url, ['--ca', certs.ca, '--cert', certs.stranger.cert, '--key', certs.stranger.key]),
    ]);
    expect(given.code, context(given)).toBe(0);
    const result = resultOf(given);
    expectNoErrors(result, context(given));
    expect(result.config.network).toEqual({ ca: true, clientCertificate: true });
    expect(JSON.stringify(result)).not.toContain(PASSPHRASE);
    expect(none.code, context(none)).toBe(3);
    expectOneLine(
      none,
      /the target requires a client certificate: give it with --cert FILE --key FILE \(CLIENT_CERT_REQUIRED \d+\)/,
    );
    expect(stranger.code, context(stranger)).toBe(3);
    expectOneLine(stranger, /the target refused the client certificate given with --cert/);
    // Measured before it ended: the outputs are written all the same.
    expect(existsSync(join(none.out, 'result.json'))).toBe(true);
  });
});

describe.concurrent('through an HTTP proxy (tinyproxy)', () => {
  const tunnels = (port: string) =>
    proxy
      .log()
      .split('\n')
      .filter((line) => line.includes(`CONNECT 127.0.0.1:${port} `)).length;

  it('HTTPS_PROXY takes every connection to an https target through the proxy; NO_PROXY covering it goes direct', async () => {
    const port = new URL(caSigned.url).port;
    const via = await run(caSigned.url, ['--ca', certs.ca, '--http2'], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: '',
    });
    expect(via.code, context(via)).toBe(0);
    const result = resultOf(via);
    expectNoErrors(result, context(via));
    expect(result.config.network?.proxy).toBe(proxy.url);
    expect(result.overall.protocols).toEqual({ 'HTTP/2': result.overall.requests });
    expect(via.stdout).toContain(`through proxy ${proxy.url}`);
    const tunnelled = tunnels(port);
    expect(tunnelled).toBeGreaterThan(0);
    const direct = await run(caSigned.url, ['--ca', certs.ca], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1',
    });
    expect(direct.code, context(direct)).toBe(0);
    expect(resultOf(direct).config.network).toEqual({ ca: true });
    expect(tunnels(port)).toBe(tunnelled);
  });

  it('--proxy takes a plain-http target through it too; a proxy that is not there is exit 3 in words', async () => {
    const port = new URL(server.url).port;
    const [via, gone] = await Promise.all([
      run(server.url, ['--proxy', proxy.url]),
      run(server.url, ['--proxy', 'http://127.0.0.1:9']),
    ]);
    expect(via.code, context(via)).toBe(0);
    expectNoErrors(resultOf(via), context(via));
    expect(tunnels(port)).toBeGreaterThan(0);
    expect(gone.code, context(gone)).toBe(3);
    expectOneLine(gone, /is behind proxy http:\/\/127\.0\.0\.1:9, which is unreachable \(ECONNREFUSED\)/);
  });
});

describe.concurrent('bench against an https target', () => {
  const bench = (flags: string[]) =>
    parallel(() =>
      runCli(
        [
          'bench',
          '--base-url',
          caSigned.url,
          '--api-key',
          'enterprise-demo-key',
          '--duration',
          '1s',
          '--connections',
          '2',
          '--out',
          freshDir('bench'),
          ...flags,
        ],
        RUN_LIMIT_MS,
      ),
    );

  it('--ca: the certificate verified once before autocannon, which then measures with 0 errors', async () => {
    const r = await bench(['--ca', certs.ca]);
    expect(r.code, context(r)).toBe(0);
    expect(r.stderr).toContain(
      "autocannon does not verify certificates: the target's is verified once, before the benchmark",
    );
    expect(r.stdout).toMatch(/^all +\d+ .* 0 +\d+$/m);
  });

  it('without --ca: exit 3 in words; --http2 and --proxy: refused in one line, exit 2', async () => {
    const [unverified, http2, proxied] = await Promise.all([
      bench([]),
      bench(['--ca', certs.ca, '--http2']),
      bench(['--ca', certs.ca, '--proxy', proxy.url]),
    ]);
    expect(unverified.code, context(unverified)).toBe(3);
    expectOneLine(unverified, /a CA this machine does not trust/);
    expect(http2.code, context(http2)).toBe(2);
    expectOneLine(
      http2,
      /^petstore-load: --http2: bench drives autocannon, which speaks HTTP\/1.1 only; measure HTTP\/2 with run --http2\n$/,
    );
    expect(proxied.code, context(proxied)).toBe(2);
    expectOneLine(proxied, /--proxy: bench drives autocannon, which cannot go through a proxy/);
  });
});
