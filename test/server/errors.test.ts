import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeprecation, parseLinks, parseSunset } from '../../src/api/deprecation-headers.ts';
import { type ErrorObject, isErrorObject } from '../../src/api/error-object.ts';
import { formatHttpDate } from '../../src/api/http-date.ts';
import type { Operation } from '../../src/api/operations.ts';
import { RATE_LIMIT_HEADER, readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { type LoadedSpec, loadSpec } from '../../src/api/spec.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { UNLIMITED_PLANS, UNREACHABLE_LIMITS, VALID_BODIES } from '../helpers/fixtures.ts';
import { type Call, call, type Reply } from '../helpers/http.ts';
import { responseErrors } from '../helpers/schemas.ts';

const UNKNOWN_ID = 987_654;

let spec: LoadedSpec;
let server: RunningServer;
let op: (id: string) => Operation;

function pathOf(operation: Operation, id: number | string): string {
  return operation.path.replace(/\{[^}]+\}/g, encodeURIComponent(String(id)));
}

/** Calls an operation; path parameters get `id`, and a body operation gets its valid body unless given one. */
function callOp(operation: Operation, id: number | string, options: Call = {}): Promise<Reply> {
  const body = options.raw === undefined ? (options.body ?? VALID_BODIES[operation.id]) : undefined;
  return call(server.url, pathOf(operation, id), { method: operation.method, ...options, body });
}

/** Every error is an Error object whose status is the HTTP status, as JSON, with the three rate-limit headers. */
function expectError(reply: Reply, status: number, code: string, operation?: Operation): ErrorObject {
  expect(reply.status, reply.text).toBe(status);
  expect(String(reply.headers['content-type'])).toMatch(/^application\/json\b/);
  expect(isErrorObject(reply.body), reply.text).toBe(true);
  const body = reply.body as ErrorObject;
  expect(body).toEqual({ code, message: expect.any(String), status });
  expect(body.message.length).toBeGreaterThan(0);
  const limits = readRateLimitHeaders(reply.headers);
  expect(limits.limit, 'X-RateLimit-Limit').toBe(UNREACHABLE_LIMITS.perMinute);
  expect(limits.remaining, 'X-RateLimit-Remaining').toBeTypeOf('number');
  expect(limits.reset, 'X-RateLimit-Reset').toBeGreaterThan(Date.now() / 1000 - 1);
  if (operation) expect(responseErrors(operation, status, reply.body)).toBeUndefined();
  return body;
}

beforeAll(async () => {
  spec = await loadSpec();
  const byId = new Map(spec.operations.map((o) => [o.id, o]));
  op = (id) => {
    const found = byId.get(id);
    if (!found) throw new Error(`the document has no operation ${id}`);
    return found;
  };
  server = await startServer({ plans: UNLIMITED_PLANS, seedData: 3 });
});

afterAll(async () => {
  await server?.close();
});

describe('operation table assumptions', () => {
  it('has a valid body for every operation that takes one', () => {
    const bodyOps = spec.operations.filter((o) => o.requestBody).map((o) => o.id);
    expect(bodyOps.sort()).toEqual(Object.keys(VALID_BODIES).sort());
  });
});

describe('400 Bad Request', () => {
  it('refuses a body that is not valid JSON', async () => {
    const reply = await call(server.url, '/pets', {
      method: 'POST',
      raw: '{"name": "Rex", "categoryId": 1',
      headers: { 'content-type': 'application/json' },
    });
    expectError(reply, 400, 'bad_request', op('createPet'));
  });

  it('refuses a body that is missing a required field, on every body operation', async () => {
    const missing: Record<string, unknown> = {
      createPet: { categoryId: 1 },
      updatePet: { name: 'Rex' },
      createCategory: { description: 'no name' },
      placeOrder: { quantity: 1 },
      updateInventory: {},
    };
    for (const [id, body] of Object.entries(missing)) {
      const reply = await callOp(op(id), 1, { body });
      const error = expectError(reply, 400, 'bad_request', op(id));
      expect(error.message, id).toMatch(/required/);
    }
  });

  it('refuses a field of the wrong type and does not coerce it', async () => {
    const before = server.store.listPets({}, { limit: 1000, offset: 0 }).length;
    for (const body of [
      { name: 123, categoryId: 1 },
      { name: 'Rex', categoryId: '1' },
      { name: 'Rex', categoryId: 1.5 },
      { name: ['Rex'], categoryId: 1 },
      { name: 'Rex', categoryId: 1, status: 'lost' },
      { name: true, categoryId: 1 },
    ]) {
      const reply = await call(server.url, '/pets', { method: 'POST', body });
      expectError(reply, 400, 'bad_request', op('createPet'));
    }
    expect(server.store.listPets({}, { limit: 1000, offset: 0 })).toHaveLength(before);
    // The same for the other bodies: a string where the document asks for an integer or boolean.
    const wrong: [string, unknown][] = [
      ['placeOrder', { petId: '1' }],
      ['placeOrder', { petId: 1, complete: 'yes' }],
      ['placeOrder', { petId: 1, quantity: 0 }],
      ['updateInventory', { quantity: '3' }],
      ['updateInventory', { quantity: -1 }],
      ['createCategory', { name: 7 }],
    ];
    for (const [id, body] of wrong) {
      expectError(await callOp(op(id), 1, { body }), 400, 'bad_request', op(id));
    }
    expect(server.store.getInventoryItem(1).quantity).toBe(100);
  });

  it('refuses a body sent as text/plain with unsupported_media_type', async () => {
    for (const id of ['createPet', 'placeOrder', 'updateInventory']) {
      const reply = await callOp(op(id), 1, {
        raw: JSON.stringify(VALID_BODIES[id]),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(reply, 400, 'unsupported_media_type', op(id));
    }
    // No content type at all on a body is not application/json either.
    const bare = await call(server.url, '/pets', { method: 'POST', raw: '{"name":"Rex","categoryId":1}' });
    expectError(bare, 400, 'unsupported_media_type', op('createPet'));
  });

  it('refuses a path id that is not an integer', async () => {
    for (const operation of spec.operations.filter((o) => o.parameters.some((p) => p.in === 'path'))) {
      for (const bad of ['abc', '1.5', '9007199254740993', '-']) {
        const reply = await callOp(operation, bad);
        expectError(reply, 400, 'bad_request', operation);
      }
    }
  });

  it('refuses an out-of-range limit or offset on every paginated operation', async () => {
    const paginated = spec.operations.filter((o) => o.parameters.some((p) => p.name === 'limit'));
    expect(paginated.length).toBeGreaterThanOrEqual(4);
    for (const operation of paginated) {
      for (const query of ['limit=0', 'limit=101', 'limit=-5', 'limit=ten', 'limit=2.5', 'offset=-1']) {
        const reply = await call(server.url, `${operation.path}?${query}`);
        expectError(reply, 400, 'bad_request', operation);
      }
      // The bounds themselves are fine.
      expect((await call(server.url, `${operation.path}?limit=1`)).status).toBe(200);
      expect((await call(server.url, `${operation.path}?limit=100&offset=0`)).status).toBe(200);
    }
  });

  it('refuses an unknown status filter', async () => {
    expectError(await call(server.url, '/pets?status=lost'), 400, 'bad_request', op('listPets'));
  });

  // Regression: path and query integers once went through Ajv's lenient coercion ('0x1', '1e1').
  it('refuses path ids and query integers that are not decimal integers', async () => {
    for (const id of ['0x1', '%201%20', '1e1', '0b11', '+2', '%20']) {
      expectError(await call(server.url, `/pets/${id}`), 400, 'bad_request', op('getPetById'));
    }
    for (const query of ['limit=0x3', 'limit=1e1', 'offset=%20', 'categoryId=%20']) {
      expectError(await call(server.url, `/pets?${query}`), 400, 'bad_request', op('listPets'));
    }
  });

  // Regression: an undecodable URL once got fastify's own error body, without rate-limit headers.
  it('answers a malformed percent-encoded path with an Error object', async () => {
    const reply = await call(server.url, '/pets/%ZZ');
    expectError(reply, 400, 'bad_request', op('getPetById'));
  });
});

describe('401 Unauthorized', () => {
  const secret = 'not-a-known-key-7f3a9c';

  it('refuses a missing key with WWW-Authenticate: Bearer', async () => {
    for (const operation of spec.operations) {
      const reply = await callOp(operation, 1, { key: null });
      expectError(reply, 401, 'unauthorized', operation);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('refuses an unknown key without echoing it', async () => {
    for (const operation of spec.operations) {
      const reply = await callOp(operation, 1, { key: secret });
      const error = expectError(reply, 401, 'unauthorized', operation);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(error.message).not.toContain(secret);
      expect(reply.text).not.toContain(secret);
    }
  });

  it('refuses a known key sent with another scheme', async () => {
    const reply = await call(server.url, '/pets', {
      key: null,
      headers: { authorization: 'Basic free-demo-key' },
    });
    expectError(reply, 401, 'unauthorized', op('listPets'));
    expect(reply.headers['www-authenticate']).toBe('Bearer');
    expect(reply.text).not.toContain('free-demo-key');
  });

  it('checks the key before the body', async () => {
    const reply = await call(server.url, '/pets', {
      method: 'POST',
      key: null,
      raw: 'not json',
      headers: { 'content-type': 'application/json' },
    });
    expectError(reply, 401, 'unauthorized', op('createPet'));
  });
});

describe('404 Not Found', () => {
  it('answers an unknown id on every operation with a path parameter', async () => {
    const withId = spec.operations.filter((o) => o.parameters.some((p) => p.in === 'path'));
    expect(withId.map((o) => o.method)).toEqual(expect.arrayContaining(['GET', 'PUT', 'DELETE']));
    for (const operation of withId) {
      const reply = await callOp(operation, UNKNOWN_ID);
      const error = expectError(reply, 404, 'not_found', operation);
      expect(error.message).toContain(String(UNKNOWN_ID));
    }
  });

  it('answers an unknown path and an undocumented method', async () => {
    expectError(await call(server.url, '/no/such/path'), 404, 'not_found');
    expectError(await call(server.url, '/pets', { method: 'PATCH', body: {} }), 404, 'not_found');
    expectError(await call(server.url, '/pets/1/extra'), 404, 'not_found');
  });
});

describe('409 Conflict', () => {
  it('refuses an order for more than the stock with insufficient_stock', async () => {
    const pet = await call(server.url, '/pets', { method: 'POST', body: { name: 'Solo', categoryId: 1 } });
    expect(pet.status).toBe(201);
    const petId = (pet.body as { id: number }).id;
    const reply = await call(server.url, '/store/orders', { method: 'POST', body: { petId, quantity: 2 } });
    expectError(reply, 409, 'insufficient_stock', op('placeOrder'));
    const entry = await call(server.url, `/store/inventory/${petId}`);
    expect(entry.body).toEqual({ petId, quantity: 1, status: 'available' });
  });

  it('refuses to complete or cancel a complete order with order_complete', async () => {
    const placed = await call(server.url, '/store/orders', { method: 'POST', body: { petId: 2 } });
    expect(placed.status).toBe(201);
    const orderId = (placed.body as { id: number }).id;
    expect((await call(server.url, `/store/orders/${orderId}/complete`, { method: 'POST' })).status).toBe(
      200,
    );
    const again = await call(server.url, `/store/orders/${orderId}/complete`, { method: 'POST' });
    expectError(again, 409, 'order_complete', op('completeOrder'));
    const cancel = await call(server.url, `/store/orders/${orderId}`, { method: 'DELETE' });
    expectError(cancel, 409, 'order_complete', op('deleteOrder'));
    expect((await call(server.url, `/store/orders/${orderId}`)).status).toBe(200);
  });
});

describe('413 Payload Too Large', () => {
  it('refuses a body over 1 MiB on every body operation', async () => {
    const big = 'x'.repeat(Math.ceil(1.1 * 1024 * 1024));
    for (const id of Object.keys(VALID_BODIES)) {
      const body = { ...(VALID_BODIES[id] as object), padding: big };
      const reply = await callOp(op(id), 1, { body });
      expectError(reply, 413, 'payload_too_large', op(id));
    }
  });

  it('accepts a body just under 1 MiB (the limit is on size, not on the extra field)', async () => {
    const reply = await call(server.url, '/categories', {
      method: 'POST',
      body: { name: 'Big', description: 'y'.repeat(1024 * 1024 - 100) },
    });
    expect(reply.status).toBe(201);
  });
});

describe('deprecation of getPetById', () => {
  function expectDeprecationHeaders(reply: Reply, operation: Operation, sunset: Date): void {
    const deprecation = reply.headers.deprecation;
    expect(deprecation).toMatch(/^@\d+$/);
    expect(parseDeprecation(deprecation)?.getTime()).toBe(operation.deprecation?.getTime());
    const sunsetHeader = reply.headers.sunset;
    const parsed = parseSunset(sunsetHeader);
    expect(parsed, `Sunset '${String(sunsetHeader)}' is not an IMF-fixdate`).toBeDefined();
    expect(parsed?.getTime()).toBe(Math.floor(sunset.getTime() / 1000) * 1000);
    const links = parseLinks(reply.headers.link);
    expect(links.some((l) => l.rel.includes('sunset'))).toBe(true);
    expect(links.find((l) => l.rel.includes('sunset'))?.uri).toBe('/openapi.yaml');
  }

  it('is marked in the document with the dates of the description', () => {
    const getPetById = op('getPetById');
    expect(getPetById.deprecated).toBe(true);
    expect(getPetById.deprecation?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(getPetById.sunset?.toISOString()).toBe('2028-06-30T00:00:00.000Z');
  });

  it('sends Deprecation, Sunset and Link on success and on errors before the sunset', async () => {
    const getPetById = op('getPetById');
    const sunset = getPetById.sunset as Date;
    const ok = await call(server.url, '/pets/1');
    expect(ok.status).toBe(200);
    expect(responseErrors(getPetById, 200, ok.body)).toBeUndefined();
    expectDeprecationHeaders(ok, getPetById, sunset);
    expect(ok.headers.sunset).toBe(formatHttpDate(sunset));
    expect(ok.headers.sunset).toBe('Fri, 30 Jun 2028 00:00:00 GMT');
    expect(ok.headers.deprecation).toBe('@1767225600');

    const missing = await call(server.url, `/pets/${UNKNOWN_ID}`);
    expectError(missing, 404, 'not_found', getPetById);
    expectDeprecationHeaders(missing, getPetById, sunset);

    const invalid = await call(server.url, '/pets/abc');
    expectError(invalid, 400, 'bad_request', getPetById);
    expectDeprecationHeaders(invalid, getPetById, sunset);
  });

  it('sends no Deprecation header on any other operation', async () => {
    const others = spec.operations.filter((o) => !o.deprecated);
    expect(others.length).toBe(spec.operations.length - 1);
    for (const operation of others) {
      // Unknown ids keep this test from deleting or completing anything it does not own.
      const reply = await callOp(operation, UNKNOWN_ID);
      expect(reply.status, operation.id).toBeLessThan(500);
      expect(reply.headers.deprecation, operation.id).toBeUndefined();
      expect(reply.headers.sunset, operation.id).toBeUndefined();
      expect(reply.headers[RATE_LIMIT_HEADER.limit], operation.id).toBeDefined();
    }
  });

  describe('after the sunset', () => {
    let retired: RunningServer;
    const sunset = new Date(Date.now() - 1000);

    beforeAll(async () => {
      retired = await startServer({ plans: UNLIMITED_PLANS, seedData: 3, sunset });
    });

    afterAll(async () => {
      await retired?.close();
    });

    it('answers 410 gone with the deprecation headers, for existing and unknown pets', async () => {
      const getPetById = op('getPetById');
      for (const id of [1, UNKNOWN_ID]) {
        const reply = await call(retired.url, `/pets/${id}`);
        expectError(reply, 410, 'gone', getPetById);
        expectDeprecationHeaders(reply, getPetById, sunset);
        // The 410 comes from the retirement, not from a changed x-deprecation.
        expect(reply.headers.deprecation).toBe('@1767225600');
      }
    });

    it('still asks for a key first, and keeps the other operations working', async () => {
      const anonymous = await call(retired.url, '/pets/1', { key: null });
      expectError(anonymous, 401, 'unauthorized', op('getPetById'));
      const list = await call(retired.url, '/pets');
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(3);
      expect(list.headers.deprecation).toBeUndefined();
      expect((await call(retired.url, '/store/inventory/1')).status).toBe(200);
    });
  });
});
