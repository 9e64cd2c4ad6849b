import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { getPlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { benchRun } from '../../src/bench/bench-run.ts';
import { parseOperationMix } from '../../src/bench/operation-mix.ts';
import { type BenchCatalogue, buildCycle } from '../../src/bench/request-cycle.ts';
import type { BenchSettings } from '../../src/bench/settings.ts';
import { prepareBench } from '../../src/bench/setup.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { UNLIMITED_PLANS } from '../helpers/fixtures.ts';

/**
 * The benchmark's engine in this process against the reference server on loopback, for what the
 * result must show to the request: which operation each answer belongs to (pipelined, with different
 * statuses), chained writes, and the coordinated-omission correction at a fixed rate. Each run is a
 * second or two; nothing here is timed.
 */

let operations: Operation[];
let byId: Map<string, Operation>;
let server: RunningServer;
let slow: RunningServer;
beforeAll(async () => {
  operations = (await loadSpec()).operations;
  byId = new Map(operations.map((op) => [op.id, op]));
  server = await startServer({ plans: UNLIMITED_PLANS });
  slow = await startServer({ plans: UNLIMITED_PLANS, faults: { latencyMs: 200 } });
});
afterAll(async () => {
  await server?.close();
  await slow?.close();
});

function settings(
  url: string,
  mixText: string,
  catalogue: BenchCatalogue,
  overrides: Partial<BenchSettings> = {},
): BenchSettings {
  const mix = parseOperationMix(mixText, [...byId.keys()]);
  return {
    origin: url,
    target: url,
    embeddedTarget: true,
    plan: 'enterprise',
    windows: getPlan(UNLIMITED_PLANS, 'enterprise').windows,
    mix,
    cycle: buildCycle(mix, catalogue, byId, '', 'enterprise-demo-key'),
    connections: 4,
    pipelining: 1,
    rate: undefined,
    durationMs: 1500,
    timeoutMs: 10_000,
    workers: 1,
    ...overrides,
  };
}

describe('bench engine (in process, reference server on loopback)', () => {
  it('gives every pipelined answer to the operation that was asked, whatever its status', async () => {
    // getOrder of an order that does not exist answers 404, listPets 200: a response given to the
    // wrong request would show as a 404 under listPets or a 200 under getOrder.
    const result = await benchRun(
      settings(
        server.url,
        'listPets:2,getOrder',
        { categoryIds: [1], petIds: [1, 2], orderId: 987_654 },
        { pipelining: 4 },
      ),
      operations,
    );
    expect(resultProblem(result)).toBeUndefined();
    const listPets = result.operations.listPets;
    const getOrder = result.operations.getOrder;
    expect(listPets?.requests).toBeGreaterThan(20);
    expect(listPets?.statuses).toEqual({ 200: listPets?.requests });
    expect(getOrder?.statuses).toEqual({ 404: getOrder?.requests });
    expect(result.overall.requests).toBe((listPets?.requests ?? 0) + (getOrder?.requests ?? 0));
    expect(result.overall.service.count).toBe(result.overall.requests);
    expect(result.meta.description).not.toMatch(/could not be paired/);
    expect(result.timeline.reduce((n, p) => n + p.requests, 0)).toBe(result.overall.requests);
  });

  it('deletes the pets it creates: each delete finds the one created before it on its connection', async () => {
    const prepared = await prepareBench({
      baseUrl: server.url,
      apiKey: 'enterprise-demo-key',
      plan: 'enterprise',
      windows: getPlan(UNLIMITED_PLANS, 'enterprise').windows,
      operations,
      mix: parseOperationMix('deletePet', [...byId.keys()]),
      timeoutMs: 10_000,
    });
    let teardown: unknown;
    try {
      const result = await benchRun(settings(server.url, 'deletePet', prepared.catalogue), operations);
      const created = result.operations.createPet;
      const deleted = result.operations.deletePet;
      expect(created?.statuses).toEqual({ 201: created?.requests });
      expect(deleted?.requests).toBeGreaterThan(10);
      expect(deleted?.statuses).toEqual({ 204: deleted?.requests });
      // A creation whose delete was still to come when the benchmark ended: at most one per connection.
      expect((created?.requests ?? 0) - (deleted?.requests ?? 0)).toBeGreaterThanOrEqual(0);
      expect((created?.requests ?? 0) - (deleted?.requests ?? 0)).toBeLessThanOrEqual(4);
    } finally {
      // Kept, not asserted here: a failed expect in `finally` would hide the one that failed above.
      teardown = await prepared.teardown();
    }
    expect(teardown).toBeUndefined();
  });

  it('at a fixed rate, back-fills the requests a slow answer held back into response time only', async () => {
    // Two connections at 20/s each: one due every 50 ms, and every answer takes at least 200 ms, so
    // each stands for at least three skipped requests (due 50, 100 and 150 ms into its wait).
    const result = await benchRun(
      settings(slow.url, 'getPetById', { categoryIds: [1], petIds: [1] }, { connections: 2, rate: 40 }),
      operations,
    );
    expect(resultProblem(result)).toBeUndefined();
    const o = result.overall;
    expect(o.requests).toBeGreaterThan(0);
    expect(o.service.count).toBe(o.requests);
    // Three back-filled for each answer, but those the end of the run cut short (one per connection
    // at most): without the correction the count would be the requests alone.
    expect(o.response.count).toBeGreaterThanOrEqual(4 * o.requests - 3 * 2);
    expect(result.operations.getPetById?.response.count).toBe(o.response.count);
    // The server's 200 ms timer fires on its loop's cached clock, which may stand up to 1 ms behind
    // the client's (199.997 ms was read once): the timer's granularity, and no more.
    expect(o.service.min).toBeGreaterThanOrEqual(200 - 1);
    expect(o.response.min).toBeLessThan(o.service.min);
  });
});
