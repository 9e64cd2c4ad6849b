import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import type { Contract } from '../../src/record/checks/contract.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { CONTRACT_IETF } from '../helpers/fixtures.ts';

/**
 * The whole chain (client, recorder, checks, result) against a loopback server that sends exactly
 * what test/fixtures/openapi/contract-ietf.yaml declares: RateLimit (IETF draft 7) on its 200s,
 * nothing on its 201 and 204. Judged by the document (the default with a --spec of one's own), no
 * rate-limit header check fails and the 201s and 204s are counted as not declared; the same server
 * leaving RateLimit off its 200s fails ratelimit-headers-present there.
 */

/** A plan the client paces at ten requests a second, and the Limit the server tells. */
const WINDOWS: RateWindow[] = [{ name: 'minute', limit: 600, seconds: 60 }];
const KEY = 'contract-test-key';

interface Mock {
  url: string;
  /** Request headers as the server got them, by `METHOD path`. */
  seen: Map<string, IncomingHttpHeaders[]>;
  close(): Promise<void>;
}

/** A fixed window of 600 from the server's start; `omit`: no RateLimit on the 200s it declares one for. */
async function mockServer(o: { omit?: boolean } = {}): Promise<Mock> {
  const windowEnd = Date.now() + 60_000;
  let used = 0;
  const seen = new Map<string, IncomingHttpHeaders[]>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    const name = `${req.method} ${path}`;
    seen.set(name, [...(seen.get(name) ?? []), req.headers]);
    req.resume();
    req.on('end', () => {
      used++;
      const rateLimit = `limit=600, remaining=${Math.max(0, 600 - used)}, reset=${Math.ceil((windowEnd - Date.now()) / 1000)}`;
      if (req.method === 'GET' && path === '/bookings') {
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(o.omit ? {} : { ratelimit: rateLimit }),
        });
        res.end('[]');
      } else if (req.method === 'POST' && path === '/bookings') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"id":"b1"}');
      } else {
        res.writeHead(204);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const scenario = defineScenario({
  name: 'bookings',
  workload: { executor: 'constant-vus', vus: 1, iterations: 4, duration: '20s' },
  flows: [
    {
      name: 'book',
      run: async (api) => {
        await api.call('listBookings');
        // A call's own headers go out; its stray Authorization does not replace the run's key.
        await api.call('createBooking', {
          body: { passenger: 'Ada' },
          headers: { 'X-Request-Id': 'r-1', Authorization: 'Bearer not-the-runs' },
        });
        await api.call('deleteBooking', { path: { bookingId: 'b1' } });
      },
    },
  ],
});

async function run(mock: Mock, contract: Contract): Promise<RunResult> {
  const { operations } = await loadSpec(CONTRACT_IETF);
  return executeScenario({
    scenario,
    workload: resolveWorkload(scenario.workload, 10),
    baseUrl: mock.url,
    target: mock.url,
    embeddedTarget: false,
    apiKey: KEY,
    operations,
    plan: 'free',
    windows: WINDOWS,
    timeScale: 1,
    enforce: true,
    spec: CONTRACT_IETF,
    seed: 1,
    contract,
  });
}

const check = (r: RunResult, id: string) => r.checks.find((c) => c.id === id);
const failing = (r: RunResult) =>
  r.checks.filter((c) => c.failures > 0).map((c) => `${c.id}: ${c.failures}, e.g. ${c.samples[0]?.detail}`);

describe('a server sending exactly what its document declares', () => {
  let mock: Mock;
  let result: RunResult;
  let underIetf: RunResult;
  beforeAll(async () => {
    mock = await mockServer();
    result = await run(mock, 'document');
    underIetf = await run(mock, 'ietf');
  }, 30_000);
  afterAll(() => mock.close());

  it('no check fails; the 201s and 204s are not declared, the 200s judged and passing', () => {
    expect(resultProblem(result)).toBeUndefined();
    expect(result.overall.statuses).toEqual({ '200': 4, '201': 4, '204': 4 });
    expect(failing(result)).toEqual([]);
    for (const id of ['ratelimit-headers-present', 'ratelimit-dialect-matches-contract'])
      expect(check(result, id), id).toMatchObject({ passes: 4, failures: 0, notDeclared: 8 });
    expect(check(result, 'ratelimit-limit-matches-plan')).toMatchObject({ passes: 4, failures: 0 });
    expect(result.config.contract).toBe('document');
    expect(result.compliance.headerDialect).toMatchObject({ contract: 'document', detected: 'ietf-7' });
  });

  it('under --contract ietf the same responses fail headers-present on every 201 and 204', () => {
    expect(check(underIetf, 'ratelimit-headers-present')).toMatchObject({ passes: 4, failures: 8 });
    expect(check(underIetf, 'ratelimit-headers-present')?.notDeclared).toBeUndefined();
  });

  it("each request asked for its operation's declared media types; a call's own headers went out, the key unchanged", () => {
    const first = (name: string) => mock.seen.get(name)?.[0] ?? {};
    expect(first('GET /bookings').accept).toBe(
      'application/json, application/problem+json, application/xml;q=0.5',
    );
    expect(first('POST /bookings').accept).toBe('application/json, application/problem+json');
    expect(first('DELETE /bookings/b1').accept).toBe('application/problem+json');
    expect(first('POST /bookings')['x-request-id']).toBe('r-1');
    expect(first('POST /bookings').authorization).toBe(`Bearer ${KEY}`);
    expect(first('GET /bookings')['x-request-id']).toBeUndefined();
  });
});

describe('a server leaving off a field its document declares', () => {
  let mock: Mock;
  let result: RunResult;
  beforeAll(async () => {
    mock = await mockServer({ omit: true });
    result = await run(mock, 'document');
  }, 30_000);
  afterAll(() => mock.close());

  it('fails ratelimit-headers-present on every 200, saying what the document declares', () => {
    expect(check(result, 'ratelimit-headers-present')).toMatchObject({
      passes: 0,
      failures: 4,
      notDeclared: 8,
    });
    expect(check(result, 'ratelimit-headers-present')?.samples[0]?.detail).toBe(
      'no rate-limit fields at all; the document declares RateLimit for 200',
    );
    expect(failing(result).map((f) => f.split(':')[0])).toEqual(['ratelimit-headers-present']);
  });
});
