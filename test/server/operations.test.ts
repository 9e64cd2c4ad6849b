import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorObject } from '../../src/api/error-object.ts';
import type { Operation } from '../../src/api/operations.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { call, type Reply } from '../helpers/http.ts';
import { responseErrors } from '../helpers/schemas.ts';

interface Example {
  params?: Record<string, number>;
  query?: string;
  body?: unknown;
}

/**
 * A valid request for every operation, run in this order against seeded data (pet 1 has stock 100).
 * Written per operationId so that an operation added to the document without an example fails below.
 */
const EXAMPLES: Record<string, Example> = {
  listPets: { query: '?status=available&limit=5&offset=1' },
  createPet: { body: { name: 'Nova', categoryId: 1, status: 'available' } },
  getPetById: { params: { petId: 1 } },
  updatePet: { params: { petId: 2 }, body: { name: 'Nova II', categoryId: 2 } },
  listCategories: { query: '?limit=3' },
  createCategory: { body: { name: 'Rodents', description: 'Small and fast' } },
  getCategory: { params: { categoryId: 1 } },
  placeOrder: { body: { petId: 1, quantity: 2 } },
  listOrders: { query: '?limit=10&offset=0' },
  getOrder: { params: { orderId: 1 } },
  completeOrder: { params: { orderId: 1 } },
  listInventory: { query: '?status=available' },
  getInventoryItem: { params: { petId: 1 } },
  updateInventory: { params: { petId: 3 }, body: { quantity: 7 } },
  deleteOrder: { params: { orderId: 2 } },
  deletePet: { params: { petId: 4 } },
};

const toPath = (op: Operation, params: Record<string, number> = {}) =>
  op.path.replace(/\{([^}]+)\}/g, (_, name: string) => String(params[name] ?? 1));

function expectRateLimitHeaders(reply: Reply, where: string) {
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(reply.headers[h], `${where}: ${h}`).toMatch(/^\d+$/);
  }
}

describe('every operation of the document, against a real server', () => {
  let server: RunningServer;
  let operations: Operation[];

  beforeAll(async () => {
    operations = (await loadSpec()).operations;
    server = await startServer({
      seedData: 10,
      plans: applyPlanOverrides(DEFAULT_PLANS, { pro: { perMinute: 100_000 } }),
    });
  });
  afterAll(() => server.close());

  it('has an example for every operation', () => {
    expect(operations.map((o) => o.id).sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  it('answers each with its success status and a body that validates against its schema', async () => {
    // A second order, so that deleteOrder cancels one that is not complete.
    await call(server.url, '/store/orders', { method: 'POST', key: 'pro-demo-key', body: { petId: 5 } });
    for (const [id, example] of Object.entries(EXAMPLES)) {
      const op = operations.find((o) => o.id === id) as Operation;
      const reply = await call(server.url, toPath(op, example.params) + (example.query ?? ''), {
        method: op.method,
        key: 'pro-demo-key',
        body: example.body,
      });
      const success = op.responses.map((r) => Number(r.status)).find((s) => s >= 200 && s < 300);
      expect(reply.status, `${id}: ${reply.text}`).toBe(success);
      expect(responseErrors(op, reply.status, reply.body), id).toBeUndefined();
      expectRateLimitHeaders(reply, id);
      if (reply.status !== 204) expect(reply.headers['content-type'], id).toMatch(/^application\/json/);
    }
  });

  it('sends the rate-limit headers with 2xx, 400, 401, 404, 409, 429 and 500 alike', async () => {
    const limited = await startServer({
      plans: applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 5 } }),
      seedData: 2,
    });
    const failing = await startServer({ faults: { errorRate: 1 }, seedData: 0 });
    try {
      const replies = [
        await call(limited.url, '/pets', { key: null }),
        await call(limited.url, '/pets/abc'),
        await call(limited.url, '/pets/999'),
        await call(limited.url, '/store/orders', { method: 'POST', body: { petId: 1, quantity: 1000 } }),
        await call(limited.url, '/pets'),
        await call(limited.url, '/pets'),
        await call(limited.url, '/pets'),
        await call(failing.url, '/pets'),
      ];
      expect(replies.map((r) => r.status)).toEqual([401, 400, 404, 409, 200, 200, 429, 500]);
      for (const reply of replies) {
        expectRateLimitHeaders(reply, String(reply.status));
        if (reply.status >= 400)
          expect(isErrorObject(reply.body) && reply.body.status === reply.status).toBe(true);
      }
    } finally {
      await Promise.all([limited.close(), failing.close()]);
    }
  });
});
