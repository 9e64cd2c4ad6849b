import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Redis } from 'ioredis';
import { addOpenApiVocabulary } from '../api/ajv.ts';
import { DEMO_KEYS } from '../api/demo-keys.ts';
import type { Operation } from '../api/operations.ts';
import { DAY_SECONDS, DEFAULT_PLANS, type Plan, type PlanTable, scalePlan } from '../api/plans.ts';
import type { LoadedSpec } from '../api/spec.ts';
import { mintedKeyTable } from '../api/tenants.ts';
import { ApiError } from './api-error.ts';
import { FaultInjector, violateSchema, wrongErrorStatus } from './faults.ts';
import { HANDLERS } from './handlers.ts';
import { DEFAULT_TENANT_SEED, type RefusalStatus, SERVER_DEFAULTS, type ServerOptions } from './options.ts';
import { type LimitDecision, PlanLimiter } from './rate-limiter.ts';
import {
  type DeprecationInfo,
  type QuotaTelling,
  writeDeprecationHeaders,
  writeRateLimitHeaders,
} from './response-headers.ts';
import { PetStore } from './store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    rateLimit: LimitDecision | undefined;
    /** The plan `rateLimit` was decided on: its windows are the policies the IETF dialects declare. */
    ratePlan: Plan | undefined;
  }
  interface FastifyContextConfig {
    operation?: Operation;
    deprecation?: DeprecationInfo;
    public?: boolean;
  }
}

const BODY_LIMIT = 1024 * 1024;

/** Fastify's own error codes that are the client's fault, mapped to the seed's statuses and codes. */
function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) return new ApiError(400, 'bad_request', error.message);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // The seed: a content type other than application/json is a 400, not a 415.
      return new ApiError(400, 'unsupported_media_type', 'the request body must be sent as application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', `the request body is over ${BODY_LIMIT} bytes`);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return new ApiError(status, status === 404 ? 'not_found' : 'bad_request', error.message);
  return new ApiError(500, 'internal_error', 'internal error');
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

/** `Authorization: Bearer <key>`; the scheme is case-insensitive (RFC 9110). */
function bearerKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^bearer +([^\s]+) *$/i.exec(header);
  return m?.[1];
}

const INTEGER = /^-?\d{1,16}$/;
const NUMBER = /^-?\d{1,16}(\.\d+)?$/;

/**
 * Path and query values arrive as strings. Ajv's own coercion takes anything Number() reads (`0x1`,
 * `1e1`, ` 1 `, '' as 0), so only plain decimal text is turned into a number here; anything else
 * stays a string and fails the type check with a 400.
 */
function coerceStrings(data: unknown, schema: { properties?: Record<string, { type?: string }> }): void {
  if (!data || typeof data !== 'object') return;
  const record = data as Record<string, unknown>;
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = record[name];
    if (typeof value !== 'string') continue;
    if (
      property.type === 'integer' ? INTEGER.test(value) : property.type === 'number' && NUMBER.test(value)
    ) {
      record[name] = Number(value);
    } else if (property.type === 'boolean' && (value === 'true' || value === 'false')) {
      record[name] = value === 'true';
    }
  }
}

/** Bodies are validated as sent; path and query strings get the strict coercion above first. */
function validatorCompiler() {
  const ajv = addOpenApiVocabulary(new Ajv({ strict: false, useDefaults: true }));
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    const validate = ajv.compile(schema);
    if (httpPart === 'body') return validate;
    const withCoercion = (data: unknown) => {
      coerceStrings(data, schema);
      const ok = validate(data);
      withCoercion.errors = validate.errors;
      return ok;
    };
    withCoercion.errors = validate.errors;
    return withCoercion;
  };
}

function routeSchema(op: Operation) {
  const part = (where: 'path' | 'query') => {
    const params = op.parameters.filter((p) => p.in === where);
    if (params.length === 0) return undefined;
    return {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema ?? {}])),
      required: params.filter((p) => p.required).map((p) => p.name),
    };
  };
  const schema = { params: part('path'), querystring: part('query'), body: op.requestBody?.schema };
  return Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined));
}

/**
 * JSON only: fastify's text/plain parser goes, so any other media type is refused (and mapped to the
 * seed's 400). An empty body parses as "no body": clients that always send the content type are not
 * punished on DELETE, and operations that need a body still fail validation with a clear message.
 */
function jsonOnly(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'bad_request', 'the request body is not valid JSON'), undefined);
    }
  });
}

/** API key -> its (time-scaled) plan: the given keys or the demo keys, and the minted tenant keys. */
function keyTable(options: ServerOptions, plans: PlanTable): Map<string, Plan> {
  const table = new Map<string, Plan>();
  for (const [key, plan] of Object.entries(options.keys ?? DEMO_KEYS)) table.set(key, plans[plan] as Plan);
  if (options.tenantKeys) {
    const minted = mintedKeyTable(options.tenantSeed ?? DEFAULT_TENANT_SEED, options.tenantKeys);
    for (const key in minted) table.set(key, plans[minted[key] as string] as Plan);
  }
  return table;
}

/** sharedBucket: how many keys' worth each plan's one bucket holds (all its keys, or the fault's size). */
function keysOfPlans(planOfKey: ReadonlyMap<string, Plan>, size: true | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const plan of planOfKey.values())
    counts[plan.name] = size === true ? (counts[plan.name] ?? 0) + 1 : size;
  return counts;
}

export interface BuiltApp {
  app: FastifyInstance;
  store: PetStore;
}

/** The plan limiter the options ask for, on time-scaled plans; none when rate limiting is off. */
function planLimiter(
  options: ServerOptions,
  plans: PlanTable,
  planOfKey: ReadonlyMap<string, Plan>,
  timeScale: number,
  redis: Redis | undefined,
): PlanLimiter | undefined {
  if (options.rateLimit === false) return undefined;
  const faultOptions = options.faults ?? {};
  return new PlanLimiter(
    plans,
    {
      after: options.banAfter ?? SERVER_DEFAULTS.banAfter,
      seconds: (options.banDurationMs ?? SERVER_DEFAULTS.banDurationMs) / 1000 / timeScale,
    },
    faultOptions.limiterLeak ?? 0,
    redis,
    {
      name: options.limiter ?? SERVER_DEFAULTS.limiter,
      burst: options.burst,
      countRefused: options.countRefused,
      // Decided on the scaled windows: the day is the day at any time scale.
      slidingBelowSeconds:
        (options.longerWindows ?? SERVER_DEFAULTS.longerWindows) === 'sliding'
          ? DAY_SECONDS / timeScale
          : undefined,
    },
    faultOptions.sharedBucket ? keysOfPlans(planOfKey, faultOptions.sharedBucket) : undefined,
    options.blockMs === undefined ? undefined : { seconds: options.blockMs / 1000 / timeScale },
  );
}

/** What the request gate needs: who holds which plan, the limiter and the faults bent into its decisions. */
interface Gate {
  planOfKey: ReadonlyMap<string, Plan>;
  anonymousPlan: Plan;
  faults: FaultInjector;
  limiter: PlanLimiter | undefined;
  faultOptions: NonNullable<ServerOptions['faults']>;
  /** How the quota is told on every response, Retry-After on a refusal included. */
  telling: Omit<QuotaTelling, 'plan'>;
  /** The status the limiter's refusals are answered with. */
  refusalStatus: RefusalStatus;
}

/** The limiter's decision on this request, in the server's dialect, on any response to it. */
function quotaHeaders(gate: Gate, request: FastifyRequest, reply: FastifyReply): void {
  if (!request.rateLimit) return;
  writeRateLimitHeaders(reply, request.rateLimit, Date.now(), { ...gate.telling, plan: request.ratePlan });
}

/**
 * The one answer to every refusal of the limiter (a window's excess, a block, a ban), under the
 * server's refusal status: the code says which refusal it is whatever the status, so a client that
 * reads bodies tells a ban from an excess under 503 or 403 too. Its headers follow in onSend.
 */
function refusalError(status: RefusalStatus, outcome: 'rate_limited' | 'banned', retryAfter: boolean) {
  if (outcome === 'banned')
    return new ApiError(
      status,
      'temporarily_banned',
      'temporarily banned for requests sent while rate limited',
    );
  const when = retryAfter ? '; retry after the Retry-After delay' : '';
  return new ApiError(status, 'rate_limited', `rate limit exceeded${when}`);
}

/** Limiter, then authentication: answers a refusal or 401 itself and returns true, or lets the request on. */
async function guard(gate: Gate, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const { planOfKey, anonymousPlan, limiter, faults } = gate;
  const key = bearerKey(request);
  const plan = key === undefined ? undefined : planOfKey.get(key);
  if (limiter) {
    // Requests without a valid key are limited per client address, so that they get headers too.
    const id = plan ? `key:${key}` : `addr:${request.ip}`;
    let decision = await limiter.admit(id, plan ?? anonymousPlan, plan !== undefined);
    if (faults.active) decision = faults.adjustDecision(id, plan ?? anonymousPlan, decision, Date.now());
    request.rateLimit = decision;
    request.ratePlan = plan ?? anonymousPlan;
    if (decision.outcome !== 'allowed') {
      sendError(reply, refusalError(gate.refusalStatus, decision.outcome, gate.telling.retryAfter));
      return true;
    }
  }
  if (!plan && !request.routeOptions.config?.public) {
    reply.header('www-authenticate', 'Bearer');
    sendError(
      reply,
      new ApiError(401, 'unauthorized', key === undefined ? 'missing API key' : 'invalid API key'),
    );
    return true;
  }
  return false;
}

/**
 * The headers every response carries (quota, deprecation), and the response faults that bend them:
 * a content type the client must not take for JSON, an error body whose status disagrees.
 */
function finishResponse(gate: Gate, request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const { faultOptions } = gate;
  quotaHeaders(gate, request, reply);
  const deprecation = request.routeOptions.config?.deprecation;
  if (deprecation) writeDeprecationHeaders(reply, deprecation, faultOptions);
  if (faultOptions.xJsonContentType) {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && /^application\/json\b/i.test(type))
      reply.header('content-type', type.replace(/^application\/json/i, 'application/x-json'));
  }
  if (faultOptions.errorBodyStatus && reply.statusCode >= 400 && typeof payload === 'string') {
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return payload;
    }
    if (body && typeof body === 'object' && typeof (body as { status?: unknown }).status === 'number')
      return JSON.stringify({ ...body, status: wrongErrorStatus(reply.statusCode) });
  }
  return payload;
}

/** The fastify instance with the gate, the error mapping and the document route, but no operations yet. */
function gatedFastify(gate: Gate, options: ServerOptions, spec: LoadedSpec): FastifyInstance {
  const { faults } = gate;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    // The document lists no HEAD operations; the server answers exactly what it documents.
    exposeHeadRoutes: false,
    // A URL the router cannot decode (`/pets/%ZZ`) is still an API request: limited, authenticated,
    // and answered with an Error object and the rate-limit headers like any other 400.
    frameworkErrors: (error, request, reply) => {
      guard(gate, request, reply)
        .then((replied) => {
          if (replied) return;
          quotaHeaders(gate, request, reply);
          sendError(reply, new ApiError(400, 'bad_request', error.message));
        })
        .catch(() => sendError(reply, new ApiError(500, 'internal_error', 'internal error')));
    },
  });
  jsonOnly(app);
  app.setValidatorCompiler(validatorCompiler());
  app.decorateRequest('rateLimit', undefined);
  app.decorateRequest('ratePlan', undefined);

  app.addHook('onRequest', async (request, reply) => {
    if (faults.active) {
      await faults.delay();
      if (faults.maybeReset(request, reply)) return reply;
    }
    if (await guard(gate, request, reply)) return reply;
    if (faults.active && faults.shouldFail()) {
      return sendError(reply, new ApiError(500, 'internal_error', 'injected fault'));
    }
    return undefined;
  });

  app.addHook('onSend', async (request, reply, payload) => finishResponse(gate, request, reply, payload));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error(error);
    return sendError(reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]?.slice(0, 200);
    return sendError(reply, new ApiError(404, 'not_found', `no operation matches ${request.method} ${path}`));
  });

  const documentText = readFileSync(spec.source, 'utf8');
  app.get('/openapi.yaml', { config: { public: true } }, (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(documentText),
  );
  return app;
}

/** One route per documented operation, each answered by its handler over the store. */
function routeOperations(
  app: FastifyInstance,
  spec: LoadedSpec,
  options: ServerOptions,
  store: PetStore,
): void {
  const faultOptions = options.faults ?? {};
  for (const op of spec.operations) {
    const handler = HANDLERS[op.id];
    if (!handler) throw new Error(`the reference server has no handler for operation '${op.id}'`);
    const sunset = op.deprecated ? (options.sunset ?? op.sunset) : undefined;
    const deprecation = op.deprecated ? { deprecation: op.deprecation, sunset } : undefined;
    app.route({
      method: op.method,
      url: op.path.replace(/\{([^}]+)\}/g, ':$1'),
      schema: routeSchema(op),
      config: { operation: op, deprecation },
      // After its sunset a deprecated operation is gone, whatever the request looked like.
      onRequest: sunset
        ? async (_request, reply) => {
            if (Date.now() >= sunset.getTime()) {
              return sendError(
                reply,
                new ApiError(410, 'gone', `${op.id} was retired on ${sunset.toISOString()}`),
              );
            }
            return undefined;
          }
        : undefined,
      handler: async (request, reply) => {
        const [status, body] = handler(store, {
          params: request.params as Record<string, number>,
          query: request.query as Record<string, unknown>,
          body: request.body,
        });
        reply.code(status);
        if (body === undefined) return reply.send();
        return reply.send(faultOptions.schemaViolation && status < 300 ? violateSchema(body) : body);
      },
    });
  }
}

export function buildApp(spec: LoadedSpec, options: ServerOptions, redis?: Redis): BuiltApp {
  const timeScale = options.timeScale ?? SERVER_DEFAULTS.timeScale;
  const plans: PlanTable = Object.fromEntries(
    Object.entries(options.plans ?? DEFAULT_PLANS).map(([name, plan]) => [name, scalePlan(plan, timeScale)]),
  );
  const planOfKey = keyTable(options, plans);
  const gate: Gate = {
    planOfKey,
    anonymousPlan: plans.free as Plan,
    faults: new FaultInjector(options.faults),
    limiter: planLimiter(options, plans, planOfKey, timeScale, redis),
    faultOptions: options.faults ?? {},
    telling: {
      dialect: options.headerDialect ?? SERVER_DEFAULTS.headerDialect,
      faults: options.faults ?? {},
      retryAfter: options.refusalRetryAfter ?? SERVER_DEFAULTS.refusalRetryAfter,
    },
    refusalStatus: options.refusalStatus ?? SERVER_DEFAULTS.refusalStatus,
  };
  const store = new PetStore();
  store.seed(options.seedData ?? SERVER_DEFAULTS.seedData);
  const app = gatedFastify(gate, options, spec);
  routeOperations(app, spec, options, store);
  return { app, store };
}
