import { afterEach, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../src/api/retry-after.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient } from '../../src/client/client.ts';
import { now } from '../../src/client/clock.ts';
import { PetstoreApi } from '../../src/client/petstore-api.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import type { ProbeResult } from '../../src/result/probe-types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { probeBattery, probeResultsOf } from '../../src/scenario/probes.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * The client's deliberately bad requests (another key or none, a raw body, another content type, no
 * retry after a 429) and the battery that runs probes with them, against the reference server.
 */

// Free: 3 requests a window; at time scale 30 the window lasts 2 s.
const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 3 } });
const TIME_SCALE = 30;

let server: RunningServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setUp() {
  server = await startServer({ plans: PLANS, timeScale: TIME_SCALE, seedData: 1 });
  const attempts: AttemptRecord[] = [];
  client = new ApiClient({
    baseUrl: server.url,
    apiKey: 'free-demo-key',
    keyLabel: 'free',
    operations: (await loadSpec()).operations,
    windows: scalePlan(getPlan(PLANS, 'free'), TIME_SCALE).windows,
    enforce: false,
    sink: { record: (a) => attempts.push(a) },
  });
  return { client, attempts };
}

describe('CallInput for deliberately bad requests', () => {
  it('sends no key, another key, a raw body and another content type; the server answers 401 and 400', async () => {
    const { client, attempts } = await setUp();
    const none = await client.call('listPets', { auth: 'none' });
    const other = await client.call('listPets', { auth: { key: 'made-up-key' } });
    expect([none.status, other.status]).toEqual([401, 401]);
    expect(none.body).toMatchObject({ status: 401, code: 'unauthorized', message: 'missing API key' });
    expect(other.body).toMatchObject({ status: 401, message: 'invalid API key' });
    const invalid = await client.call('createPet', { rawBody: '{"name": ' });
    expect(invalid.body).toMatchObject({ status: 400, message: 'the request body is not valid JSON' });
    const text = await client.call('createPet', {
      rawBody: '{"name":"x","categoryId":1}',
      contentType: 'text/plain',
    });
    expect(text.body).toMatchObject({ status: 400, code: 'unsupported_media_type' });
    // The run's own key still goes with an ordinary call; a 400 of the missing field, counted in the key's window.
    const missing = await client.call('createPet', { body: { categoryId: 1 } });
    expect(missing.status).toBe(400);
    expect(attempts.map((a) => a.status)).toEqual([401, 401, 400, 400, 400]);
    // Neither key is in what the recorder was given.
    expect(JSON.stringify(attempts)).not.toMatch(/made-up-key|free-demo-key/);
  });

  it('retry: false returns the 429 itself, and the key stays paused until its Retry-After', async () => {
    const { client, attempts } = await setUp();
    let response = await client.call('listPets', { retry: false });
    for (let i = 0; i < 5 && response.status !== 429; i++)
      response = await client.call('listPets', { retry: false });
    expect(response.status).toBe(429);
    expect(response.attempts).toBe(1);
    const pauseEnds =
      (attempts.at(-1)?.receivedAt ?? 0) +
      retryAfterDelayMs(
        parseRetryAfter(response.headers['retry-after']) ?? { form: 'seconds', seconds: 0 },
        0,
      );
    expect(attempts.filter((a) => a.status === 429)).toHaveLength(1);
    expect(attempts.at(-1)?.retried).toBe(false);
    const next = await client.call('listPets', { retry: false });
    expect(next.status).toBe(200);
    expect(attempts.at(-1)?.sentAt).toBeGreaterThanOrEqual(pauseEnds);
    expect(now()).toBeGreaterThanOrEqual(pauseEnds);
  });
});

describe('probeBattery', () => {
  it('runs the probes in order, counts their requests, and fails a probe that throws', async () => {
    const calls: string[] = [];
    const api = new PetstoreApi(async <T>(operationId: string) => {
      calls.push(operationId);
      return { status: 200, ok: true, headers: {}, body: [] as T, attempts: 1 };
    });
    const battery = probeBattery<{ n: number }>([
      {
        id: 'two-calls',
        description: 'lists twice',
        expected: '200',
        run: async (a, data) => {
          await a.listPets();
          await a.listCategories();
          return { passed: data.n === 1, actual: '200' };
        },
      },
      {
        id: 'throws',
        description: 'breaks',
        expected: 'anything',
        source: 'test',
        run: async () => {
          throw new Error('no such thing');
        },
      },
    ]);
    await battery.flow.run(api, {
      data: { n: 1 },
      vu: 0,
      iteration: 0,
      random: () => 0,
      pick: <T>(items: readonly T[]) => items[0] as T,
    });
    expect(calls).toEqual(['listPets', 'listCategories']);
    const results = probeResultsOf({
      name: 's',
      workload: { executor: 'constant-vus', vus: 1 },
      flows: [],
      probes: battery,
    });
    expect(results?.map(({ durationMs: _, ...r }) => r)).toEqual([
      {
        id: 'two-calls',
        description: 'lists twice',
        expected: '200',
        actual: '200',
        passed: true,
        requests: 2,
      },
      {
        id: 'throws',
        description: 'breaks',
        expected: 'anything',
        source: 'test',
        actual: 'the probe failed to run',
        passed: false,
        detail: 'no such thing',
        requests: 0,
      },
    ]);
    expect(
      probeResultsOf({ name: 's', workload: { executor: 'constant-vus', vus: 1 }, flows: [] }),
    ).toBeUndefined();
    expect(() => probeBattery([battery.probes[0], battery.probes[0]] as never)).toThrow(/used twice/);
  });

  it('the HTML report shows the matrix, escaped, only when the result has probes', async () => {
    const probes: ProbeResult[] = [
      {
        id: 'ok-one',
        description: 'd',
        expected: '401 Error',
        actual: '401 Error',
        passed: true,
        requests: 1,
        durationMs: 2,
      },
      {
        id: 'bad-one',
        description: 'd',
        expected: '400 Error',
        actual: '200 <script>',
        passed: false,
        detail: 'body <b>',
        requests: 1,
        durationMs: 2,
      },
    ];
    const base = await syntheticResult(ladder('listPets', 5));
    expect(resultProblem({ ...base, probes })).toBeUndefined();
    expect(renderHtmlReport(base)).not.toContain('id="probes"');
    const page = renderHtmlReport({ ...base, probes });
    expect(page).toContain('data-probes="failed"');
    expect(page).toContain('1 of 2 probes failed');
    expect(page).toContain('data-probe="bad-one" class="failing"');
    expect(page).toContain('200 &lt;script&gt;');
    expect(page).not.toContain('<b>');
  });
});
