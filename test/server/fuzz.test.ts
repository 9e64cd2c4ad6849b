import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../../src/api/demo-keys.ts';
import { type ErrorObject, isErrorObject } from '../../src/api/error-object.ts';
import type { Operation } from '../../src/api/operations.ts';
import { readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { type LoadedSpec, loadSpec } from '../../src/api/spec.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { UNLIMITED_PLANS, VALID_BODIES } from '../helpers/fixtures.ts';
import { type Call, call, type Reply } from '../helpers/http.ts';
import { responseErrors } from '../helpers/schemas.ts';

/**
 * Malformed input of every kind, to every operation of the document: the server must answer each
 * request with a client error (never 5xx), in the seed's Error shape, and keep answering.
 */

const SEED_PETS = 30;

let spec: LoadedSpec;
let server: RunningServer;
let byId: Map<string, Operation>;
/** Operation ids, not Operation objects, so that a counterexample stays one readable line. */
let bodyOps: string[];
let pathOps: string[];
let queryOps: string[];
let requests = 0;
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

function fillPath(op: Operation, segment: string): string {
  return op.path.replace(/\{[^}]+\}/g, segment);
}

async function send(op: Operation, path: string, options: Call): Promise<Reply> {
  requests++;
  return call(server.url, path, { method: op.method, ...options });
}

/**
 * The property every response must have: no 5xx; an error is a JSON Error object whose `status` is
 * the HTTP status, with the rate-limit headers. With `op`, the body must also match what the
 * operation declares for that status (which catches undeclared statuses too).
 */
function checkReply(reply: Reply, op?: Operation): void {
  const context = `${reply.status} ${reply.text.slice(0, 300)}`;
  expect(reply.status, context).toBeLessThan(500);
  expect(reply.status, context).not.toBe(429);
  const limits = readRateLimitHeaders(reply.headers);
  expect(limits.limit, context).toBeTypeOf('number');
  expect(limits.remaining, context).toBeTypeOf('number');
  expect(limits.reset, context).toBeTypeOf('number');
  if (reply.status >= 400) {
    expect(String(reply.headers['content-type']), context).toMatch(/^application\/json\b/);
    expect(isErrorObject(reply.body), context).toBe(true);
    expect((reply.body as ErrorObject).status, context).toBe(reply.status);
  }
  if (op) expect(responseErrors(op, reply.status, reply.body), `${op.id} ${context}`).toBeUndefined();
}

// Arbitraries

/** Text of every kind: ASCII, any grapheme, and raw UTF-16 units (lone surrogates included). */
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '\u202e', '😀', 'null', 'true', '{}', '[]', '"', '\\'),
);

/** Numbers JSON.stringify can write, plus ones it cannot (as literal text, see `rawNumber`). */
const anyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, -1, 2 ** 31, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE, 1.5),
);
const rawNumber = fc.oneof(
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '9007199254740993', '1.0', '1E2', '0.0000001', '1e21'),
);

const anyJson = fc.jsonValue({ maxDepth: 4 });
const anyField = fc.oneof(anyText, anyNumber, fc.boolean(), fc.constant(null), anyJson);

/** Objects with the fields of the document's bodies, each of any type, some left out. */
const wrongTypedObject = fc.record(
  {
    name: anyField,
    categoryId: anyField,
    status: fc.oneof(anyField, fc.constantFrom('available', 'pending', 'sold', 'AVAILABLE')),
    description: anyField,
    petId: anyField,
    quantity: anyField,
    shipDate: fc.oneof(
      anyField,
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    ),
    complete: anyField,
    id: anyField,
  },
  { requiredKeys: [] },
);

/** Raw JSON texts that JSON.stringify never writes: huge numbers, `__proto__` keys, deep nesting. */
const rawJsonBody = fc.oneof(
  fc
    .tuple(fc.constantFrom('name', 'categoryId', 'petId', 'quantity', 'id', 'status'), rawNumber)
    .map(([field, n]) => `{"name":"x","categoryId":1,"petId":1,"quantity":1,"${field}":${n}}`),
  fc
    .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), anyJson)
    .map(([key, v]) => `{"${key}":${JSON.stringify(v)},"name":"x","categoryId":1,"petId":1,"quantity":2}`),
  fc.constantFrom(
    '{"__proto__":{"polluted":true,"quantity":1},"petId":1}',
    '{"constructor":{"prototype":{"polluted":true}},"name":"p","categoryId":1}',
    '{"name":"a","name":1,"categoryId":1}',
    '{"quantity":1,"quantity":"1"}',
  ),
  fc.integer({ min: 1, max: 5_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc
    .integer({ min: 1, max: 2_000 })
    .map((n) => `{"name":"x","categoryId":1,"x":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
  fc
    .integer({ min: 1, max: 2_000 })
    .map((n) => `{"name":${'['.repeat(n)}"x"${']'.repeat(n)},"categoryId":1}`),
);

const anyBody = fc.oneof(
  { arbitrary: anyJson.map((v) => JSON.stringify(v)), weight: 3 },
  { arbitrary: wrongTypedObject.map((v) => JSON.stringify(v)), weight: 4 },
  { arbitrary: rawJsonBody, weight: 3 },
  { arbitrary: anyText, weight: 2 },
);

/** Path segments: everything is percent-encoded with encodeURIComponent, so the URL stays valid. */
const encodable = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'));
  }
};
const pathId = fc.oneof(
  anyText.filter((s) => s !== '' && s !== '.' && s !== '..').map(encodable),
  fc.integer({ min: -(2 ** 40), max: -1 }).map(String),
  fc.double({ noNaN: true }).map(String),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map(String),
  fc.integer({ min: 0, max: SEED_PETS + 5 }).map(String),
  fc.constantFrom(
    '0x1',
    '1e1',
    '+1',
    '01',
    'Infinity',
    'NaN',
    '-0',
    '1.0',
    '%25',
    '%2F',
    '%00',
    '%20',
    '1%2C2',
  ),
);
/** Only letters: never a number, in any notation Number() accepts. */
const letters = fc.stringMatching(/^[g-wyzG-WYZ]{1,12}$/).filter((s) => !/infinity|nan/i.test(s));

const queryValue = fc.oneof(
  anyText,
  anyNumber.map(String),
  rawNumber,
  fc.constantFrom('', 'available', 'sold'),
);
const queryPair = fc.tuple(
  fc.oneof(fc.constantFrom('limit', 'offset', 'status', 'categoryId', '__proto__', 'constructor'), anyText),
  queryValue,
);
const queryString = fc.oneof(
  fc
    .array(queryPair, { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v]) => `${encodable(k)}=${encodable(v)}`).join('&')),
  fc.constantFrom(
    '&&&',
    '===',
    'limit',
    'limit=1&limit=2',
    'limit[]=1',
    'limit[a]=1',
    'status=available&status=sold',
    '__proto__[polluted]=1',
    'constructor[prototype][polluted]=1',
    '%25',
    'limit=%31',
    'offset=1e3',
    'limit=0x10',
  ),
);

/** Printable ASCII only: undici refuses control characters in header values before sending. */
const headerText = fc.string({ maxLength: 40 });
const demoKey = fc.constantFrom(...Object.keys(DEMO_KEYS));
const authorization = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Token', 'Bearer:', 'Bear', ''),
      fc.constantFrom(' ', '  ', '', '\t', ' : '),
      fc.oneof(
        demoKey,
        headerText,
        demoKey.map((k) => `${k} extra`),
        demoKey.map((k) => k.toUpperCase()),
        // Names every object answers to: a key table looked up with `in` or `[]` would take them.
        fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'),
      ),
    )
    .map(([scheme, gap, token]) => `${scheme}${gap}${token}`),
  headerText,
);
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'text/plain',
    'text/json',
    'application/jsonx',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/vnd.api+json',
    'application/json; charset=utf-16',
    'application/json;;;',
    '*/*',
    '',
  ),
  headerText,
);

/** What the document says about a key: `Bearer <key>`, scheme case-insensitive, one token. */
function isValidAuthorization(value: string): boolean {
  const m = /^bearer +(\S+) *$/i.exec(value.trim());
  // Own keys only: `__proto__` is `in` every object, and the server rightly refuses it.
  return m !== null && m[1] !== undefined && Object.hasOwn(DEMO_KEYS, m[1]);
}

const RUNS = { bodies: 500, raw: 300, paths: 500, letters: 150, queries: 400, headers: 500 };

beforeAll(async () => {
  spec = await loadSpec();
  byId = new Map(spec.operations.map((o) => [o.id, o]));
  const ids = (keep: (o: Operation) => boolean) => spec.operations.filter(keep).map((o) => o.id);
  bodyOps = ids((o) => o.requestBody !== undefined);
  pathOps = ids((o) => o.parameters.some((p) => p.in === 'path'));
  queryOps = ids((o) => o.parameters.some((p) => p.in === 'query'));
  server = await startServer({ plans: UNLIMITED_PLANS, seedData: SEED_PETS });
});

afterAll(async () => {
  await server?.close();
});

describe('fuzzing the reference server', () => {
  it('finds the operations to fuzz in the operation table', () => {
    expect([...bodyOps].sort()).toEqual(Object.keys(VALID_BODIES).sort());
    expect(pathOps.length).toBeGreaterThanOrEqual(8);
    expect(queryOps.length).toBeGreaterThanOrEqual(4);
  });

  it('answers malformed JSON bodies to every body operation with a client error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyOps), anyBody, async (opId, raw) => {
        const op = byId.get(opId)!;
        const reply = await send(op, fillPath(op, '1'), {
          raw,
          headers: { 'content-type': 'application/json' },
        });
        checkReply(reply, op);
      }),
      { numRuns: RUNS.bodies },
    );
  });

  it('answers raw bodies under any content type without a server error, refusing non-JSON types', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyOps),
        fc.oneof(anyText, anyBody),
        contentType,
        async (opId, raw, type) => {
          const op = byId.get(opId)!;
          const reply = await send(op, fillPath(op, '1'), { raw, headers: { 'content-type': type } });
          checkReply(reply, op);
          const media = type.split(';')[0]?.trim().toLowerCase();
          if (media !== 'application/json') {
            // Anything but JSON is refused whatever the body (an empty body counts as none).
            if (raw !== '') expect((reply.body as ErrorObject).code).toBe('unsupported_media_type');
          }
        },
      ),
      { numRuns: RUNS.raw },
    );
  });

  it('answers arbitrary path ids to every operation with a path parameter', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...pathOps), pathId, async (opId, id) => {
        const op = byId.get(opId)!;
        const body = VALID_BODIES[op.id];
        const reply = await send(op, fillPath(op, id), { body });
        checkReply(reply, op);
        if (op.deprecated) expect(reply.headers.deprecation).toBeDefined();
      }),
      { numRuns: RUNS.paths },
    );
  });

  it('refuses every non-numeric path id with 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...pathOps), letters, async (opId, id) => {
        const op = byId.get(opId)!;
        const reply = await send(op, fillPath(op, id), { body: VALID_BODIES[op.id] });
        checkReply(reply, op);
        expect(reply.status).toBe(400);
        expect((reply.body as ErrorObject).code).toBe('bad_request');
      }),
      { numRuns: RUNS.letters },
    );
  });

  it('answers arbitrary query strings with a page or a 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...queryOps), queryString, async (opId, query) => {
        const op = byId.get(opId)!;
        const reply = await send(op, `${op.path}?${query}`, {});
        checkReply(reply, op);
        expect([200, 400]).toContain(reply.status);
        if (reply.status === 200) expect((reply.body as unknown[]).length).toBeLessThanOrEqual(100);
      }),
      { numRuns: RUNS.queries },
    );
  });

  it('answers arbitrary Authorization and Content-Type headers, and accepts only a Bearer demo key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...byId.keys()),
        authorization,
        fc.option(contentType, { nil: undefined }),
        async (opId, auth, type) => {
          const op = byId.get(opId)!;
          const body = VALID_BODIES[op.id];
          const headers: Record<string, string> = { authorization: auth };
          if (type !== undefined) headers['content-type'] = type;
          // Unknown ids keep this property from deleting or completing the seed data.
          const reply = await send(op, fillPath(op, '123456'), {
            key: null,
            headers,
            raw: body === undefined ? undefined : JSON.stringify(body),
          });
          checkReply(reply, op);
          if (isValidAuthorization(auth)) {
            expect(reply.status, auth).not.toBe(401);
          } else {
            expect(reply.status, auth).toBe(401);
            expect(reply.headers['www-authenticate']).toBe('Bearer');
            // A key that is not accepted is not echoed (short tokens would match the message by chance).
            const token = auth.trim().split(/\s+/).pop() ?? '';
            if (token.length >= 16) expect(reply.text).not.toContain(token);
          }
        },
      ),
      { numRuns: RUNS.headers },
    );
  });

  it('keeps answering and its prototypes clean after all of it', async () => {
    expect(requests).toBeGreaterThanOrEqual(Object.values(RUNS).reduce((a, b) => a + b, 0));
    const reply = await call(server.url, '/pets');
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.body)).toBe(true);
    // The server runs in this process: a polluted Object.prototype would show here.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
