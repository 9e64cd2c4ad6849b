import { createHash } from 'node:crypto';
import type { Transport } from '../../src/client/client.ts';

/**
 * Third-party limiters as transports in front of a simulated target (test/helpers/simulated.ts),
 * for the logic that answers them in simulated time. Each is the behaviour its real counterpart
 * shows on the wire, which an end-to-end test against the real one keeps honest.
 */

/**
 * nginx `limit_conn N` keyed by the Authorization header with `limit_conn_status 429`: a request of a
 * key that already has N in flight is refused at once with a bare 429 (nginx's HTML page, no
 * Retry-After, no quota headers); the others go upstream.
 */
export function limitConn(upstream: Transport, conn: number): Transport {
  const inFlight = new Map<string, number>();
  return async (pool, request) => {
    const headers = request.headers as Record<string, string>;
    const key = headers.authorization ?? '';
    const now = inFlight.get(key) ?? 0;
    if (now >= conn) {
      return {
        status: 429,
        headers: { 'content-type': 'text/html', server: 'nginx' },
        text: '<html><head><title>429 Too Many Requests</title></head></html>',
      };
    }
    inFlight.set(key, now + 1);
    try {
      return await upstream(pool, request);
    } finally {
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
    }
  };
}

/**
 * What the node limiters of test/helpers/limiters.ts pass back from the upstream: its status, its
 * Content-Type and its body; every other upstream header stays behind.
 */
function passedOn(reply: Awaited<ReturnType<Transport>>): Awaited<ReturnType<Transport>> {
  const type = reply.headers['content-type'];
  return {
    status: reply.status,
    headers: type === undefined ? {} : { 'content-type': type },
    text: reply.text,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface LimitReqModel {
  /** Requests a second: nginx's '2r/s' is 2, its '120r/m' is 2 as well. */
  perSecond: number;
  burst?: number;
  nodelay?: boolean;
  /** `limit_req_status`: 429 here by default; 503 is nginx's own default, with `limit_req_status` left out. */
  status?: number;
}

/**
 * nginx `limit_req` with `limit_req_status 429`, as ngx_http_limit_req_module computes it: a GCRA
 * kept in thousandths of a request on a millisecond clock. A request's excess is the last one's,
 * drained at the rate since, plus one; past the burst it is refused with a bare 429 (and not
 * counted); otherwise it is counted, and, unless `nodelay`, held excess / rate before it goes
 * upstream: a queue releasing at the rate. nginx's zone is keyed by the client's address, which is
 * one for every request of a test: one excess for all.
 */
export function limitReq(upstream: Transport, model: LimitReqModel): Transport {
  // nginx keeps the rate per second times 1000 and the excess in thousandths, both integers.
  const rate = Math.round(model.perSecond * 1000);
  const burst = (model.burst ?? 0) * 1000;
  let excess = 0;
  let last: number | undefined;
  return async (pool, request) => {
    const now = Math.floor(Date.now());
    let next = 0;
    if (last !== undefined) {
      const ms = Math.max(0, now - last);
      next = Math.max(0, excess - Math.trunc((rate * ms) / 1000) + 1000);
      if (next > burst) {
        const status = model.status ?? 429;
        return {
          status,
          headers: { 'content-type': 'text/html', server: 'nginx' },
          text: `<html><head><title>${status} ${status === 429 ? 'Too Many Requests' : 'Service Temporarily Unavailable'}</title></head></html>`,
        };
      }
      if (ms > 0) last = now;
    } else last = now;
    excess = next;
    if (next > 0 && !model.nodelay) await sleep((next * 1000) / rate);
    return upstream(pool, request);
  };
}

/** Keys as test/helpers/limiters.ts keys the node limiters: by the Authorization header. */
const keyOf = (request: Parameters<Transport>[1]) =>
  (request.headers as Record<string, string>).authorization ?? '127.0.0.1';

/**
 * A fixed window per key as express-rate-limit's and express-slow-down's MemoryStore keeps it: it
 * starts at the key's first request after the last one ended and lasts `windowMs`; every request,
 * refused or not, counts.
 */
function fixedWindows(windowMs: number) {
  const clients = new Map<string, { hits: number; resetAt: number }>();
  return (key: string) => {
    const now = Date.now();
    let client = clients.get(key);
    if (!client || client.resetAt <= now) {
      client = { hits: 0, resetAt: now + windowMs };
      clients.set(key, client);
    }
    client.hits++;
    return { hits: client.hits, resetAt: client.resetAt };
  };
}

export interface SlowDownModel {
  delayAfter: number;
  delayMs: number;
  windowMs?: number;
  maxDelayMs?: number;
}

/**
 * express-slow-down as test/helpers/limiters.ts configures it: never a refusal, no header; the
 * request that is the key's hits-th of its window waits min((hits - delayAfter) * delayMs,
 * maxDelayMs) before going upstream.
 */
export function slowDown(upstream: Transport, model: SlowDownModel): Transport {
  const hit = fixedWindows(model.windowMs ?? 60_000);
  return async (pool, request) => {
    const { hits } = hit(keyOf(request));
    const delay = Math.max(
      0,
      Math.min((hits - model.delayAfter) * model.delayMs, model.maxDelayMs ?? 2_147_483_647),
    );
    if (hits > model.delayAfter) await sleep(delay);
    return passedOn(await upstream(pool, request));
  };
}

export interface ExpressRateLimitModel {
  limit: number;
  windowMs: number;
  /** The header sets the real one is asked for: IETF draft-8 alone, or none at all. */
  headers: 'draft-8' | 'none';
}

/**
 * express-rate-limit 8 with `standardHeaders: 'draft-8'` and no legacy headers (or no header at
 * all): a fixed window per key; every answer tells `RateLimit: "<limit>-in-<w>sec"; r=<remaining>;
 * t=<seconds to the reset, rounded up>` and its policy; the request past the limit is refused with
 * 429, a Retry-After of the same seconds (when any header is on) and its message as the body.
 */
export function expressRateLimit(upstream: Transport, model: ExpressRateLimitModel): Transport {
  const hit = fixedWindows(model.windowMs);
  const windowS = Math.ceil(model.windowMs / 1000);
  const name = `"${model.limit}-in-${model.windowMs / 1000}sec"`;
  return async (pool, request) => {
    const key = keyOf(request);
    const { hits, resetAt } = hit(key);
    const headers: Record<string, string> = {};
    const resetS = Math.max(0, Math.ceil((resetAt - Date.now()) / 1000));
    if (model.headers === 'draft-8') {
      const pk = Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
      headers.ratelimit = `${name}; r=${Math.max(0, model.limit - hits)}; t=${resetS}`;
      headers['ratelimit-policy'] = `${name}; q=${model.limit}; w=${windowS}; pk=:${pk}:`;
    }
    if (hits > model.limit) {
      if (model.headers !== 'none') headers['retry-after'] = String(resetS);
      return {
        status: 429,
        headers: { ...headers, 'content-type': 'text/html; charset=utf-8' },
        text: 'Too many requests, please try again later.',
      };
    }
    const reply = passedOn(await upstream(pool, request));
    return { ...reply, headers: { ...headers, ...reply.headers } };
  };
}

export interface FastifyRateLimitModel {
  max: number;
  timeWindowMs: number;
}

/**
 * @fastify/rate-limit 10 with its LocalStore and default headers: a fixed window per key from its
 * first request; every answer tells X-RateLimit-Limit, -Remaining and -Reset (the seconds left in
 * the window, rounded up); the request past `max` is refused with 429, Remaining 0, a Retry-After of
 * the same seconds and its JSON error.
 */
export function fastifyRateLimit(upstream: Transport, model: FastifyRateLimitModel): Transport {
  const windows = new Map<string, { current: number; startMs: number }>();
  return async (pool, request) => {
    const key = keyOf(request);
    const now = Date.now();
    let entry = windows.get(key);
    if (!entry || entry.startMs + model.timeWindowMs <= now) {
      entry = { current: 0, startMs: now };
      windows.set(key, entry);
    }
    entry.current++;
    const resetS = Math.ceil((model.timeWindowMs - (now - entry.startMs)) / 1000);
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(model.max),
      'x-ratelimit-remaining': String(Math.max(0, model.max - entry.current)),
      'x-ratelimit-reset': String(resetS),
    };
    if (entry.current > model.max) {
      return {
        status: 429,
        headers: {
          ...headers,
          'retry-after': String(resetS),
          'content-type': 'application/json; charset=utf-8',
        },
        text: JSON.stringify({
          statusCode: 429,
          code: 'FST_ERR_RATE_LIMITED',
          error: 'Too Many Requests',
          message: `Rate limit exceeded, retry in ${resetS} second${resetS === 1 ? '' : 's'}`,
        }),
      };
    }
    const reply = passedOn(await upstream(pool, request));
    return { ...reply, headers: { ...headers, ...reply.headers } };
  };
}

export interface BlockingModel {
  limit: number;
  windowMs: number;
  blockMs: number;
  /** Every request during the block starts it again, as some proxies' blocks do. */
  extends?: boolean;
}

/**
 * A proxy's block after the first excess, as rate-limiter-flexible's `blockDuration` wired by its
 * README tells it: a fixed window per key from its first request, X-RateLimit-Limit, -Remaining and
 * -Reset (a Unix time) on every answer, and at the first request past the limit the key refused for
 * `blockMs`, Retry-After telling what is left (with `extends`, each refused request starts it anew).
 */
export function blocking(upstream: Transport, model: BlockingModel): Transport {
  const windows = new Map<string, { count: number; resetAt: number }>();
  const blockedUntil = new Map<string, number>();
  const told = (limit: number, remaining: number, resetAt: number, retryAt?: number) => ({
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.ceil(resetAt / 1000)),
    ...(retryAt === undefined ? {} : { 'retry-after': String(Math.ceil((retryAt - Date.now()) / 1000)) }),
  });
  const refuse = (key: string, until: number) => {
    blockedUntil.set(key, until);
    return { status: 429, headers: told(model.limit, 0, until, until), text: '{"code":"rate_limited"}' };
  };
  return async (pool, request) => {
    const now = Date.now();
    const key = keyOf(request);
    const blocked = blockedUntil.get(key) ?? 0;
    if (blocked > now) return refuse(key, model.extends ? now + model.blockMs : blocked);
    let w = windows.get(key);
    if (!w || w.resetAt <= now) {
      w = { count: 0, resetAt: now + model.windowMs };
      windows.set(key, w);
    }
    if (w.count >= model.limit) return refuse(key, now + model.blockMs);
    w.count++;
    const reply = passedOn(await upstream(pool, request));
    return {
      ...reply,
      headers: { ...reply.headers, ...told(model.limit, model.limit - w.count, w.resetAt) },
    };
  };
}

export interface AlignedWindowModel {
  limit: number;
  windowMs: number;
  /** The status of a refusal: 403, as a well-known public API refuses. */
  status: number;
  /** How far into its current window the clock is when the limiter starts, ms: the probe's phase. */
  phaseMs: number;
}

/**
 * A fixed window aligned to the clock (every multiple of `windowMs` since the epoch), as an API that
 * documents `x-ratelimit-limit/-remaining/-used/-reset` (a Unix time in seconds) on every answer and
 * refuses an excess with 403 and a JSON message, no Retry-After. A key's first request may fall
 * anywhere in its window: the window is older than the client's first request.
 */
export function alignedWindow(upstream: Transport, model: AlignedWindowModel): Transport {
  const used = new Map<string, { start: number; count: number }>();
  // The windows' boundaries as the clock's, placed so that a test's phase is its own, not the hour's.
  const origin = Date.now() - model.phaseMs;
  return async (pool, request) => {
    const key = keyOf(request);
    const start = origin + Math.floor((Date.now() - origin) / model.windowMs) * model.windowMs;
    let entry = used.get(key);
    if (!entry || entry.start !== start) {
      entry = { start, count: 0 };
      used.set(key, entry);
    }
    const refused = entry.count >= model.limit;
    if (!refused) entry.count++;
    const headers = {
      'x-ratelimit-limit': String(model.limit),
      'x-ratelimit-remaining': String(model.limit - entry.count),
      'x-ratelimit-used': String(entry.count),
      'x-ratelimit-reset': String(Math.ceil((start + model.windowMs) / 1000)),
      'x-ratelimit-resource': 'core',
    };
    if (refused)
      return {
        status: model.status,
        headers: { ...headers, 'content-type': 'application/json' },
        text: JSON.stringify({ message: 'API rate limit exceeded' }),
      };
    const reply = passedOn(await upstream(pool, request));
    return { ...reply, headers: { ...headers, ...reply.headers } };
  };
}
