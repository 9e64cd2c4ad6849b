import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { cliWorkspace, outcomeContext as context, readJson, runCli } from '../helpers/integration-cli.ts';
import {
  makeCertificates,
  startTlsFront,
  type TestCertificates,
  type TlsFront,
} from '../helpers/tls-target.ts';

/**
 * Pacing over TLS, against the reference server behind Debian's nginx: HTTP/2's many streams on one
 * connection must not change a quota's accounting. Its verdict keeps a schedule (the plan rate), so
 * it runs with the timing files.
 */

const SCENARIO = join('test', 'helpers', 'scenarios', 'shared-browse.ts');
const freshDir = cliWorkspace('tls-pacing').fresh;

let certs: TestCertificates;
let server: RunningServer;
let front: TlsFront;

beforeAll(async () => {
  certs = makeCertificates();
  // A key of its own for each run: a fresh window each, the server's buckets apart.
  server = await startServer({
    timeScale: 10,
    keys: { 'pro-h1': 'pro', 'pro-h2': 'pro' },
  });
  front = await startTlsFront({ upstream: server.url, cert: certs.server, http2: true });
}, 60_000);

afterAll(async () => {
  await front?.stop();
  await server?.close();
  certs?.remove();
});

/** 4 s at the pro plan's full rate (50 a second at time scale 10), its own key each time. */
async function paced(key: string, flags: string[]): Promise<RunResult> {
  const out = freshDir('paced');
  const r = await runCli(
    [
      'run',
      SCENARIO,
      '--base-url',
      front.url,
      '--ca',
      certs.ca,
      '--api-key',
      key,
      '--plan',
      'pro',
      '--time-scale',
      '10',
      '--rate',
      '100%',
      '--duration',
      '4s',
      '--out',
      out,
      ...flags,
    ],
    60_000,
  );
  expect(r.code, context(r)).toBe(0);
  const result = readJson(join(out, 'result.json')) as RunResult;
  expect(resultProblem(result)).toBeUndefined();
  return result;
}

describe('over TLS: pacing unchanged by HTTP/2', () => {
  it('at the plan rate, HTTP/2 draws no 429 and uses at least 95% of the quota HTTP/1.1 uses', async () => {
    const h1 = await paced('pro-h1', []);
    const h2 = await paced('pro-h2', ['--http2']);
    expect(h1.overall.protocols).toEqual({ 'HTTP/1.1': h1.overall.requests });
    expect(h2.overall.protocols).toEqual({ 'HTTP/2': h2.overall.requests });
    expect(h1.overall.rateLimited).toBe(0);
    expect(h2.overall.rateLimited).toBe(0);
    expect(h2.compliance.violations).toBe(0);
    expect(h1.compliance.quotaUtilization).toBeGreaterThan(0.8);
    expect(h2.compliance.quotaUtilization).toBeGreaterThanOrEqual(0.95 * h1.compliance.quotaUtilization);
  }, 120_000);
});
