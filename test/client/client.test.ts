import { afterEach, describe, expect, it } from 'vitest';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient, type ClientOptions } from '../../src/client/client.ts';
import { now } from '../../src/client/clock.ts';
import { AbortedError } from '../../src/client/gate.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';

// Free: 2 requests a window; at time scale 30 the window lasts 2 s, so a 429's Retry-After is 1-2 s.
const PLANS = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 2 } });
const TIME_SCALE = 30;

let server: RunningServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

async function setUp(options: Partial<ClientOptions> = {}) {
  server = await startServer({ plans: PLANS, timeScale: TIME_SCALE, seedData: 1 });
  const attempts: AttemptRecord[] = [];
  const windows = scalePlan(getPlan(PLANS, 'free'), TIME_SCALE).windows;
  client = new ApiClient({
    baseUrl: server.url,
    apiKey: 'free-demo-key',
    keyLabel: 'free',
    operations: (await loadSpec()).operations,
    windows,
    enforce: false,
    sink: { record: (a) => attempts.push(a) },
    ...options,
  });
  return { client, attempts };
}

describe('ApiClient against the reference server', () => {
  it('gives a JSON body parsed, an empty body as its text, and the same body to the recorder', async () => {
    const { client, attempts } = await setUp({ enforce: true });
    const pet = await client.call<{ id: number; name: string }>('getPetById', { path: { petId: 1 } });
    expect(pet.ok).toBe(true);
    expect(pet.body).toMatchObject({ id: 1 });
    expect(pet.body).toBe(pet.body);
    expect((attempts[0] as AttemptRecord).body.json).toBe(pet.body);
    const deleted = await client.call('deletePet', { path: { petId: 1 } });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expect(deleted.error).toBeUndefined();
    expect('error' in deleted).toBe(false);
    // Serialised (logged by a flow, say), a response shows its body and nothing of its insides.
    expect(JSON.parse(JSON.stringify(pet))).toEqual({
      status: 200,
      ok: true,
      headers: expect.any(Object),
      body: pet.body,
      attempts: 1,
    });
  });

  it('pauses the key after a 429 even when that call is not retried', async () => {
    const { client, attempts } = await setUp({ maxRateLimitRetries: 0 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await client.call('listPets')).status);
    expect(statuses).toEqual([200, 200, 429]);
    const rejected = attempts[2] as AttemptRecord;
    const delayMs = Number(rejected.headers?.['retry-after']) * 1000;
    expect(delayMs).toBeGreaterThan(0);
    // Another call, from any virtual user, waits out the 429's Retry-After before it is sent.
    const next = await client.call('listPets');
    expect(next.status).toBe(200);
    const sent = attempts[3] as AttemptRecord;
    expect(sent.sentAt).toBeGreaterThanOrEqual(rejected.receivedAt + delayMs);
    expect(sent.backoffWaitMs).toBeGreaterThan(0);
  });

  it('ends a call waiting out a pause when the run is interrupted, and later calls still work', async () => {
    const { client, attempts } = await setUp({ maxRateLimitRetries: 0 });
    for (let i = 0; i < 3; i++) await client.call('listPets');
    const sentBefore = attempts.length;
    const started = now();
    const waiting = client.call('listPets');
    setTimeout(() => client.interrupt(), 50);
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
    // Well before the 1-2 s pause would have ended, and nothing was sent meanwhile.
    expect(now() - started).toBeLessThan(800);
    expect(attempts.length).toBe(sentBefore);
    // The interrupt ends the waits of its moment only: a new call waits for the pause and goes out.
    expect((await client.call('listPets')).status).toBe(200);
  });
});
