import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import type { RateWindow } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { buildTenantMix, type TenantGroupSpec, type TenantMix } from '../../src/api/tenants.ts';
import { ApiClient, type ClientOptions, type Transport } from '../../src/client/client.ts';
import { now } from '../../src/client/clock.ts';
import { AbortedError, HeldPastEndError } from '../../src/client/gate.ts';
import { MemoryQuotaStore, type QuotaSpec } from '../../src/client/quota-store.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';

/**
 * A tenant mix's keys in one client: each lane paced by its own plan, paused by its own 429s, named
 * in the records by its tenant, while the close, drain and interrupt of the run reach them all.
 * Most tests answer through a fake transport (no sockets): what is under test is the client's.
 */

const operations: Operation[] = (await loadSpec()).operations;

/** Plans of a few hundred ms, so that pacing shows in a test's time. */
const WINDOWS: Record<string, RateWindow[]> = {
  slow: [{ name: 'w', limit: 1, seconds: 0.2 }],
  fast: [{ name: 'w', limit: 1, seconds: 0.05 }],
  long: [{ name: 'w', limit: 1, seconds: 10 }],
  roomy: [{ name: 'w', limit: 1000, seconds: 1 }],
  // One send a second: a second send waits whatever a loaded machine did to the first ones.
  second: [{ name: 'w', limit: 1, seconds: 1 }],
};

function mix(specs: TenantGroupSpec[]): TenantMix {
  return buildTenantMix(
    specs,
    (plan) => WINDOWS[plan] as RateWindow[],
    (plan, n) => `${plan}-key-${n}`,
  );
}

interface Sent {
  authorization: string | undefined;
  at: number;
}

/** Answers 200, or what `answer` says for a request; keeps what each key sent, and when. */
function fakeTransport(
  answer?: (
    authorization: string | undefined,
    n: number,
  ) => { status: number; headers?: Record<string, string> } | undefined,
) {
  const sent: Sent[] = [];
  const transport: Transport = async (_pool, options) => {
    const authorization = (options.headers as Record<string, string>).authorization;
    sent.push({ authorization, at: now() });
    const n = sent.filter((s) => s.authorization === authorization).length;
    const a = answer?.(authorization, n) ?? { status: 200 };
    return { status: a.status, headers: { 'content-type': 'application/json', ...a.headers }, text: '[]' };
  };
  const of = (key: string) => sent.filter((s) => s.authorization === `Bearer ${key}`).map((s) => s.at);
  return { transport, sent, of };
}

let client: ApiClient | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await client?.close();
  client = undefined;
});

function newClient(transport: Transport, options: Partial<ClientOptions> = {}) {
  const attempts: AttemptRecord[] = [];
  client = new ApiClient({
    baseUrl: 'http://127.0.0.1:9',
    apiKey: 'own-key',
    keyLabel: 'own',
    operations,
    windows: WINDOWS.roomy as RateWindow[],
    sink: { record: (a) => attempts.push(a) },
    transport,
    ...options,
  });
  return { client, attempts };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe('lanes of a tenant mix', () => {
  it('paces each key by its own plan, apart from the others', async () => {
    const fake = fakeTransport();
    const { client } = newClient(fake.transport);
    const m = mix([
      { plan: 'slow', keys: 1 },
      { plan: 'fast', keys: 1 },
    ]);
    const [slow, fast] = m.tenants.map((t) => client.lane(t));
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 3; i++) calls.push(slow!.call('listPets'), fast!.call('listPets'));
    await Promise.all(calls);
    const slowTimes = fake.of('slow-key-1');
    const fastTimes = fake.of('fast-key-1');
    expect(slowTimes).toHaveLength(3);
    expect(fastTimes).toHaveLength(3);
    // Each plan's spacing (window + a 5 ms guard), less what a loaded machine may put between a
    // send's admission and the transport seeing it: 205 ms and 55 ms, far apart either way.
    for (const g of gaps(slowTimes)) expect(g).toBeGreaterThanOrEqual(190);
    for (const g of gaps(fastTimes)) expect(g).toBeGreaterThanOrEqual(45);
    // The fast key was not held to the slow one's pace: all three left before the slow key's second.
    expect(fastTimes[2] as number).toBeLessThan(slowTimes[1] as number);
  });

  it('pauses only the key a 429 came to; the others go on sending, and every record names its tenant', async () => {
    // The abusive key's first request is refused for 1 s; every other answer is 200.
    const fake = fakeTransport((auth, n) =>
      auth === 'Bearer slow-key-1' && n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : undefined,
    );
    const { client, attempts } = newClient(fake.transport);
    const m = mix([
      { plan: 'slow', keys: 1, enforce: false, name: 'abusive' },
      { plan: 'roomy', keys: 2 },
    ]);
    const [abusive, roomy1, roomy2] = m.tenants.map((t) => client.lane(t));
    const retried = abusive!.call('listPets');
    await vi.waitFor(() => expect(attempts).toHaveLength(1));
    const refused = attempts[0] as AttemptRecord;
    expect(refused.status).toBe(429);
    const pauseUntil = refused.pauseUntil as number;
    expect(pauseUntil).toBeGreaterThanOrEqual(refused.receivedAt + 1000);
    // While the abusive key waits out its second, the compliant keys send at once.
    for (let i = 0; i < 3; i++) await Promise.all([roomy1!.call('listPets'), roomy2!.call('listPets')]);
    expect(now()).toBeLessThan(pauseUntil);
    expect((await retried).status).toBe(200);
    const retry = attempts.at(-1) as AttemptRecord;
    expect(retry.sentAt).toBeGreaterThanOrEqual(pauseUntil);
    expect(retry.backoffWaitMs).toBeGreaterThan(900);
    const others = attempts.filter((a) => a.tenant?.plan === 'roomy');
    expect(others).toHaveLength(6);
    for (const a of others) {
      expect(a.sentAt).toBeLessThan(pauseUntil);
      expect(a.backoffWaitMs).toBe(0);
    }
    // Each record carries its tenant (the one shared object) and its label, never the key.
    for (const a of attempts) {
      const tenant = m.tenants.find((t) => t.tenant === a.tenant)?.tenant;
      expect(tenant).toBeDefined();
      expect(a.keyLabel).toBe(tenant?.label);
      expect(JSON.stringify({ ...a, body: undefined, operation: undefined })).not.toContain('-key-');
    }
    expect(attempts.map((a) => a.keyLabel)).toEqual(
      expect.arrayContaining(['abusive#1', 'roomy#1', 'roomy#2']),
    );
  });

  it("sends each lane's own key, and labels a call's other key or none as on the client", async () => {
    const fake = fakeTransport();
    const { client, attempts } = newClient(fake.transport);
    const [t] = mix([{ plan: 'roomy', keys: 1 }]).tenants;
    const lane = client.lane(t!);
    await lane.call('listPets');
    await lane.call('listPets', { auth: 'none' });
    await lane.call('listPets', { auth: { key: 'stolen' } });
    await lane.call('createPet', { body: { name: 'Rex' } });
    await client.call('listPets');
    expect(fake.sent.map((s) => s.authorization)).toEqual([
      'Bearer roomy-key-1',
      undefined,
      'Bearer stolen',
      'Bearer roomy-key-1',
      'Bearer own-key',
    ]);
    expect(attempts.map((a) => a.keyLabel)).toEqual([
      'roomy#1',
      'roomy#1 (no key)',
      'roomy#1 (another key)',
      'roomy#1',
      'own',
    ]);
    expect(attempts.slice(0, 4).every((a) => a.tenant === t!.tenant)).toBe(true);
    // The client's own key is no tenant's.
    expect((attempts[4] as AttemptRecord).tenant).toBeUndefined();
  });

  it('closes, drains and interrupts every lane at once', async () => {
    const fake = fakeTransport((auth, n) =>
      auth === 'Bearer roomy-key-1' && n === 1
        ? { status: 429, headers: { 'retry-after': '30' } }
        : undefined,
    );
    const { client } = newClient(fake.transport);
    const m = mix([
      { plan: 'long', keys: 2 },
      { plan: 'roomy', keys: 1 },
    ]);
    const [long1, long2, roomy] = m.tenants.map((t) => client.lane(t));
    await long1!.call('listPets');

    // Drain: no lane sends, at once; off again, they do.
    client.drain(true);
    await expect(long2!.call('listPets')).rejects.toBeInstanceOf(AbortedError);
    await expect(client.call('listPets')).rejects.toBeInstanceOf(AbortedError);
    client.drain(false);
    await long2!.call('listPets');

    // Close: a send its plan holds 10 s fails at once; the latest hold over lanes is reported.
    client.closeAt(now() + 100);
    const t0 = now();
    await expect(long1!.call('listPets')).rejects.toBeInstanceOf(HeldPastEndError);
    await expect(long2!.call('listPets')).rejects.toBeInstanceOf(HeldPastEndError);
    // At once, not after the plan's 10 s (a loaded machine may take a few hundred ms for anything).
    expect(now() - t0).toBeLessThan(1000);
    expect(client.heldPastEnd()).toMatchObject({ by: "the plan's quota" });
    expect(client.heldPastEnd()?.until).toBeGreaterThan(t0 + 9000);
    client.closeAt(Number.POSITIVE_INFINITY);

    // Interrupt: one lane waiting on its plan, another on a 429's pause; both end, later calls work.
    const paced = long1!.call('listPets');
    const paused = roomy!.call('listPets');
    await vi.waitFor(() => expect(fake.of('roomy-key-1')).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 20));
    const t1 = now();
    client.interrupt();
    await expect(paced).rejects.toBeInstanceOf(AbortedError);
    await expect(paused).rejects.toBeInstanceOf(AbortedError);
    expect(now() - t1).toBeLessThan(1000);
    expect(client.scheduler.size).toBe(0);
    expect((await client.call('listPets')).status).toBe(200);
  });

  it("keeps lanes out of the shared quota store: a tenant's key lives in one generator", async () => {
    const reserved: string[] = [];
    const store = new (class extends MemoryQuotaStore {
      override reserve(key: string, spec: QuotaSpec): Promise<number> {
        reserved.push(key);
        return super.reserve(key, spec);
      }
    })();
    const fake = fakeTransport();
    const { client } = newClient(fake.transport, { sharedQuota: { store, key: 'run-1' } });
    const m = mix([
      { plan: 'roomy', keys: 2 },
      { plan: 'fast', keys: 1 },
    ]);
    for (const t of m.tenants) await client.lane(t).call('listPets');
    await client.call('listPets');
    expect(reserved).toEqual(['run-1']);
  });

  it('holds a thousand waiting lanes on a handful of timers', async () => {
    const fake = fakeTransport();
    const { client } = newClient(fake.transport);
    const lanes = mix([{ plan: 'second', keys: 1000 }]).tenants.map((t) => client.lane(t));
    await Promise.all(lanes.map((l) => l.call('listPets')));
    const spy = vi.spyOn(globalThis, 'setTimeout');
    // Each lane's second send waits about a second for its own plan.
    const second = Promise.all(lanes.map((l) => l.call('listPets')));
    await Promise.resolve();
    expect(client.scheduler.size).toBeGreaterThan(900);
    // Over 900 waits, one timer armed (for the earliest): not one per waiting lane. How often it is
    // re-armed afterwards depends on how spread the first sends were, which a loaded machine decides.
    expect(spy.mock.calls.length).toBeLessThanOrEqual(2);
    await second;
    expect(fake.sent).toHaveLength(2000);
  });

  it("shares the client's connection pool among its lanes", async () => {
    const sockets = new Set<unknown>();
    const server = createServer((req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key: req.headers.authorization }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { client } = newClient(undefined as unknown as Transport, {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        transport: undefined,
        connections: 2,
      });
      const lanes = mix([{ plan: 'roomy', keys: 20 }]).tenants.map((t) => client.lane(t));
      const replies = await Promise.all(lanes.map((l) => l.call<{ key: string }>('listPets')));
      expect(replies.map((r) => r.body.key)).toEqual(lanes.map((_, i) => `Bearer roomy-key-${i + 1}`));
      expect(sockets.size).toBeLessThanOrEqual(2);
    } finally {
      await client?.close();
      client = undefined;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('costs well under 1 KB of heap per lane that has made a few requests', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    let answers = 0;
    // Answers as the reference server's: a quota in headers, a window's first answer now and then.
    // Records go nowhere: the recorder's memory is another budget than the client's.
    const { client } = newClient(
      async () => ({
        status: 200,
        headers: {
          'content-type': 'application/json',
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': String(59 - (answers++ % 59)),
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
        },
        text: '[]',
      }),
      { sink: { record: () => undefined } },
    );
    const drive = async (lanes: { call(op: string): Promise<unknown> }[]) => {
      for (let i = 0; i < 2; i++)
        await Promise.all(lanes.map((l) => l.call('listPets').then(() => undefined)));
    };
    // Free's windows at time scale 100: each lane's second send waits ~10 ms on the scheduler.
    const windows = [
      { name: 'minute', limit: 60, seconds: 0.6 },
      { name: 'day', limit: 1000, seconds: 864 },
    ];
    const N = 10_000;
    const tenants = buildTenantMix(
      [{ plan: 'free', keys: N }],
      () => windows,
      (_p, n) => `free-key-${n}`,
    ).tenants;
    // Warm the code paths first, so that the figure is the lanes' and not the compiler's.
    await drive(
      buildTenantMix(
        [{ plan: 'free', keys: 50 }],
        () => windows,
        () => 'w',
      ).tenants.map((t) => client.lane(t)),
    );
    const before = heap();
    const lanes = tenants.map((t) => client.lane(t));
    await drive(lanes);
    const perLane = (heap() - before) / N;
    expect(lanes).toHaveLength(N);
    console.log(`heap per lane after 2 requests: ${perLane.toFixed(0)} B`);
    expect(perLane).toBeLessThan(1024);
  });
});

describe('a concurrency limit per key', () => {
  it('each lane learns its own in-flight cap from the 429s of its own key', async () => {
    // A server that serves each key 2 requests at a time (30 ms each) and refuses a third at once.
    const LIMIT = 2;
    const inFlight = new Map<string, number>();
    const refused = new Map<string, number>();
    const transport: Transport = async (_pool, options) => {
      const key = String((options.headers as Record<string, string>).authorization);
      const busy = inFlight.get(key) ?? 0;
      if (busy >= LIMIT) {
        refused.set(key, (refused.get(key) ?? 0) + 1);
        return { status: 429, headers: {}, text: '' };
      }
      inFlight.set(key, busy + 1);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      return { status: 200, headers: { 'content-type': 'application/json' }, text: '[]' };
    };
    // Backoff after a headerless 429 kept short: what is under test is the cap, not the wait.
    const { client } = newClient(transport, { rateLimitBackoffBaseMs: 10, rateLimitBackoffCapMs: 50 });
    const m = mix([{ plan: 'roomy', keys: 2 }]);
    const lanes = m.tenants.map((t) => client.lane(t));
    // Four callers per key, ten calls each.
    await Promise.all(
      lanes.flatMap((lane) =>
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 10; i++) await lane.call('listPets');
        }),
      ),
    );
    for (const lane of lanes) expect(lane.spacingState()).toMatchObject({ maxInFlight: LIMIT, decreases: 0 });
    // The first four at once cost each key two 429s at most; after that, none.
    expect([...refused.values()].every((n) => n <= 2)).toBe(true);
    expect(refused.size).toBe(2);
    // The client's own key sent nothing and learned nothing.
    expect(client.spacingState().maxInFlight).toBeUndefined();
  });
});
