import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import express from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { slowDown } from 'express-slow-down';
import Fastify from 'fastify';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { Agent, type Dispatcher, request } from 'undici';
import { proxyTarget, startNginx } from './nginx.ts';

/**
 * Real third-party rate limiters (@fastify/rate-limit, express-rate-limit, rate-limiter-flexible,
 * nginx limit_req and limit_conn) in front of an upstream, on loopback: what the toolkit meets in the wild, to test its
 * reading of their headers against the limiters themselves rather than against our emulation of them.
 */
export interface RunningLimiter {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  stop(): Promise<void>;
}

/** What a limiter passes on and brings back: enough for the pet store's JSON API, no more. */
interface Incoming {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body?: Buffer;
}

interface UpstreamReply {
  status: number;
  contentType?: string;
  body: Buffer;
}

const FORWARDED_HEADERS = ['content-type', 'authorization'] as const;

/** The upstream's base without a trailing slash, so that its path prefixes the request's. */
const baseOf = (upstream: string) => upstream.replace(/\/+$/, '');

async function forward(agent: Agent, upstream: string, incoming: Incoming): Promise<UpstreamReply> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = incoming.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const response = await request(`${baseOf(upstream)}${incoming.url}`, {
    dispatcher: agent,
    method: incoming.method as Dispatcher.HttpMethod,
    headers,
    // undici refuses a body on GET; an empty one is no body at all.
    body: incoming.body && incoming.body.length > 0 ? incoming.body : undefined,
  });
  const body = Buffer.from(await response.body.arrayBuffer());
  const contentType = response.headers['content-type'];
  return {
    status: response.statusCode,
    ...(typeof contentType === 'string' ? { contentType } : {}),
    body,
  };
}

/** Every request comes from 127.0.0.1: keyed by IP, two tests' API keys would share one bucket. */
export const keyOf = (authorization: string | undefined, ip: string) => authorization ?? ip;

export interface FastifyRateLimitOptions {
  upstream: string;
  max: number;
  timeWindowMs: number;
}

/** @fastify/rate-limit with its default headers: X-RateLimit-Reset in seconds until the reset. */
export async function startFastifyRateLimit(options: FastifyRateLimitOptions): Promise<RunningLimiter> {
  const agent = new Agent();
  const app = Fastify({ logger: false });
  await app.register(fastifyRateLimit, {
    max: options.max,
    timeWindow: options.timeWindowMs,
    keyGenerator: (req) => keyOf(req.headers.authorization, req.ip),
  });
  // Bodies go through as bytes: the upstream, not the limiter, judges them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.all('/*', async (req, reply) => {
    const upstream = await forward(agent, options.upstream, {
      method: req.method,
      url: req.url,
      headers: req.headers,
      body: Buffer.isBuffer(req.body) ? req.body : undefined,
    });
    reply.code(upstream.status);
    if (upstream.contentType) reply.header('content-type', upstream.contentType);
    return reply.send(upstream.body);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: urlOf(app.server),
    stop: async () => {
      app.server.closeAllConnections();
      await app.close();
      await agent.close();
    },
  };
}

export interface ExpressRateLimitOptions {
  upstream: string;
  limit: number;
  windowMs: number;
  standardHeaders: false | 'draft-6' | 'draft-7' | 'draft-8';
  legacyHeaders: boolean;
}

/** An express app whose limiter is already mounted, passing what it lets through to the upstream, on loopback. */
export async function serveBehind(app: express.Express, upstreamUrl: string): Promise<RunningLimiter> {
  const agent = new Agent();
  app.use(express.raw({ type: () => true, limit: '10mb' }));
  app.use(async (req, res) => {
    const upstream = await forward(agent, upstreamUrl, {
      method: req.method,
      url: req.originalUrl,
      headers: req.headers,
      body: Buffer.isBuffer(req.body) ? req.body : undefined,
    });
    res.status(upstream.status);
    if (upstream.contentType) res.setHeader('content-type', upstream.contentType);
    res.end(upstream.body);
  });
  const server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: urlOf(server),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      await agent.close();
    },
  };
}

/** express-rate-limit 8 on express 5, sending the header sets asked for. */
export async function startExpressRateLimit(options: ExpressRateLimitOptions): Promise<RunningLimiter> {
  const app = express();
  app.use(expressRateLimit(options));
  return serveBehind(app, options.upstream);
}

function expressRateLimit(options: Omit<ExpressRateLimitOptions, 'upstream'>) {
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    standardHeaders: options.standardHeaders,
    legacyHeaders: options.legacyHeaders,
    keyGenerator: (req) => keyOf(req.headers.authorization, ipKeyGenerator(req.ip ?? '127.0.0.1')),
    // Its checks log (never throw) once per instance; the one that reads the keyGenerator's source
    // text is a guess that a transpiler's renaming can defeat, and the IP is only a fallback here.
    validate: { keyGeneratorIpFallback: false },
  });
}

/**
 * Two or more express-rate-limit instances stacked, shortest window first, as an app enforces
 * several windows at once: a request passes each or is refused by the first that is spent. Each one
 * writes its own X-RateLimit-* headers, so an admitted answer tells the last (longest) window's room
 * and a refusal the window that refused; Retry-After tells that window's return.
 */
export async function startStackedExpressRateLimit(options: {
  upstream: string;
  windows: { limit: number; windowMs: number }[];
}): Promise<RunningLimiter> {
  const app = express();
  for (const w of options.windows)
    app.use(expressRateLimit({ ...w, standardHeaders: false, legacyHeaders: true }));
  return serveBehind(app, options.upstream);
}

export interface FlexibleBlockOptions {
  upstream: string;
  points: number;
  durationS: number;
  blockDurationS: number;
}

/**
 * rate-limiter-flexible's memory limiter with `blockDuration`, in an express app wired as its README
 * wires one: X-RateLimit-Limit, -Remaining and -Reset (a Unix time) on every answer, Retry-After in
 * whole seconds on a 429. A key past its points is blocked for `blockDurationS` from its first excess
 * (the library blocks once: a request inside the block does not prolong it).
 */
export async function startFlexibleBlock(options: FlexibleBlockOptions): Promise<RunningLimiter> {
  const limiter = new RateLimiterMemory({
    points: options.points,
    duration: options.durationS,
    blockDuration: options.blockDurationS,
  });
  const app = express();
  app.use(async (req, res, next) => {
    const tell = (r: RateLimiterRes) => {
      res.setHeader('X-RateLimit-Limit', String(options.points));
      res.setHeader('X-RateLimit-Remaining', String(r.remainingPoints));
      res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
    };
    try {
      tell(await limiter.consume(keyOf(req.headers.authorization, req.ip ?? '127.0.0.1')));
      next();
    } catch (rejected) {
      if (!(rejected instanceof RateLimiterRes)) return next(rejected);
      tell(rejected);
      res.setHeader('Retry-After', String(Math.ceil(rejected.msBeforeNext / 1000)));
      res.status(429).json({ code: 'rate_limited', message: 'Too Many Requests' });
    }
  });
  return serveBehind(app, options.upstream);
}

function urlOf(server: Server): string {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the limiter is not listening');
  return `http://127.0.0.1:${address.port}`;
}

export interface NginxLimitReqOptions {
  upstream: string;
  /** nginx's own syntax: '60r/m', '2r/s'. */
  rate: string;
  burst?: number;
  nodelay?: boolean;
  /** The variable requests are counted by; `$binary_remote_addr` (nginx's usual) by default. */
  zoneKey?: string;
  /**
   * The status of a refusal: 429 by default (`limit_req_status 429`, as most configs set it), or
   * `'nginx-default'` to leave `limit_req_status` out, as nginx ships: an excess is then a 503.
   */
  status?: number | 'nginx-default';
}

/** Everything the config interpolates is checked, so no option can smuggle in a directive. */
function checkNginxOptions(options: NginxLimitReqOptions): void {
  if (!/^\d+r\/[sm]$/.test(options.rate)) throw new Error(`nginx rate ${options.rate}: want e.g. '60r/m'`);
  if (options.burst !== undefined && !(Number.isInteger(options.burst) && options.burst >= 0))
    throw new Error(`nginx burst ${options.burst}: want a whole number`);
  const { status } = options;
  // nginx takes 400 to 599 here and refuses its config otherwise.
  if (
    status !== undefined &&
    status !== 'nginx-default' &&
    !(Number.isInteger(status) && status >= 400 && status <= 599)
  )
    throw new Error(`nginx status ${status}: want 400 to 599, or 'nginx-default'`);
  checkNginxCommon(options);
}

function checkNginxCommon(options: { upstream: string; zoneKey?: string }): void {
  if (options.zoneKey !== undefined && !/^\$[a-z0-9_]+$/.test(options.zoneKey))
    throw new Error(`nginx zoneKey ${options.zoneKey}: want a variable, e.g. '$http_authorization'`);
  proxyTarget(options.upstream);
}

/** The directives a limiter puts in nginx's http block (its zone) and in the location (the limit). */
interface NginxLimit {
  zone: string;
  limit: string;
}

function limitReq(options: NginxLimitReqOptions): NginxLimit {
  const status = options.status ?? 429;
  return {
    zone: [
      `limit_req_zone ${options.zoneKey ?? '$binary_remote_addr'} zone=limiter:1m rate=${options.rate};`,
      status === 'nginx-default' ? '' : `\n  limit_req_status ${status};`,
    ].join(''),
    limit: [
      'limit_req zone=limiter',
      options.burst === undefined ? '' : ` burst=${options.burst}`,
      options.nodelay ? ' nodelay' : '',
      ';',
    ].join(''),
  };
}

function limitConn(options: NginxLimitConnOptions): NginxLimit {
  return {
    zone: `limit_conn_zone ${options.zoneKey ?? '$http_authorization'} zone=conn:1m;
  limit_conn_status 429;`,
    limit: `limit_conn conn ${options.conn};`,
  };
}

/**
 * Debian's nginx with `limit_req` in front of the upstream: a leaky bucket that sends a bare 429
 * (or the `status` asked for; nginx's own default, 503 Service Temporarily Unavailable with its HTML
 * page, for `'nginx-default'`), with no rate-limit header and no Retry-After.
 */
export async function startNginxLimitReq(options: NginxLimitReqOptions): Promise<RunningLimiter> {
  checkNginxOptions(options);
  return startNginxLimit(options.upstream, limitReq(options));
}

export interface NginxLimitConnOptions {
  upstream: string;
  /** Requests of one key in flight at most; the next is refused with a bare 429. */
  conn: number;
  /** The variable requests are counted by; `$http_authorization` (one API key) by default. */
  zoneKey?: string;
}

/**
 * nginx's `limit_conn`: a concurrency limit, whatever the rate. Over HTTP/1.1 each request in flight
 * holds its own connection, so it counts requests of the key in flight; the 429 is bare.
 */
export async function startNginxLimitConn(options: NginxLimitConnOptions): Promise<RunningLimiter> {
  if (!(Number.isInteger(options.conn) && options.conn >= 1))
    throw new Error(`nginx conn ${options.conn}: want a whole number, 1 or more`);
  checkNginxCommon(options);
  return startNginxLimit(options.upstream, limitConn(options));
}

async function startNginxLimit(upstream: string, { zone, limit }: NginxLimit): Promise<RunningLimiter> {
  const target = proxyTarget(upstream);
  const nginx = await startNginx(
    (port) => `${zone}
  server {
    listen 127.0.0.1:${port};
    location / {
      # limit_req and limit_conn act in the preaccess phase, after rewrite: a 'return' would never be limited.
      ${limit}
      proxy_pass ${target};
    }
  }`,
  );
  return { url: `http://127.0.0.1:${nginx.port}`, stop: nginx.stop };
}

export interface ExpressSlowDownOptions {
  upstream: string;
  /** Requests per window answered at once; each one past them waits `delayMs` more than the last. */
  delayAfter: number;
  /** The growth of the delay per request past `delayAfter`, ms. */
  delayMs: number;
  /** The window the requests are counted in; default the library's, a minute. */
  windowMs?: number;
  /** The longest delay, ms; default none. */
  maxDelayMs?: number;
}

/**
 * express-slow-down on express 5: it never refuses, it holds each request past `delayAfter` in a
 * window for (hits - delayAfter) * delayMs before passing it on, and tells no header (its default).
 */
export async function startExpressSlowDown(options: ExpressSlowDownOptions): Promise<RunningLimiter> {
  const app = express();
  app.use(
    slowDown({
      windowMs: options.windowMs ?? 60_000,
      delayAfter: options.delayAfter,
      delayMs: (hits: number) => (hits - options.delayAfter) * options.delayMs,
      ...(options.maxDelayMs === undefined ? {} : { maxDelayMs: options.maxDelayMs }),
      keyGenerator: (req) => keyOf(req.headers.authorization, ipKeyGenerator(req.ip ?? '127.0.0.1')),
      validate: { keyGeneratorIpFallback: false },
    }),
  );
  return serveBehind(app, options.upstream);
}
