import express from 'express';
import { ipKeyGenerator, type RateLimitInfo, rateLimit } from 'express-rate-limit';
import { getCurrentMicroseconds, InMemoryRateLimiter } from 'rolling-rate-limiter';
import { keyOf, type RunningLimiter, serveBehind } from './limiters.ts';
import { proxyTarget } from './nginx.ts';
import { startVarnish } from './varnish.ts';

/**
 * More real third-party limiters in front of an upstream, on loopback (test/helpers/limiters.ts has
 * the first ones): those that refuse with another status than 429, keep a moving window, or block a
 * key. Each keys by the request's Authorization header, so that two tests' keys never share a bucket.
 */

export interface ForbiddingRateLimitOptions {
  upstream: string;
  /** Requests per window; 10 by default. */
  limit?: number;
  /** The fixed window, ms, from a key's first request; 10 s by default. */
  windowMs?: number;
  /** The status of a refusal; 403 by default. */
  statusCode?: number;
  /**
   * With a name, every answer also tells `x-ratelimit-used` (the requests the library counted in the
   * window, refusals included: 11 on the 11th of 10) and `x-ratelimit-resource: <name>`.
   */
  resource?: string;
}

/**
 * express-rate-limit 8 refusing as a well-known public API does: a 403 (by default) with the JSON
 * body `{"message": "API rate limit exceeded"}`, and the legacy headers alone on every answer:
 * X-RateLimit-Limit, X-RateLimit-Remaining (0 on a refusal) and X-RateLimit-Reset, the window's end
 * as a Unix time in whole seconds (the library rounds it up), beside a Date header it sets. No
 * RateLimit header and no Retry-After: the library sets Retry-After on every refusal whenever it
 * sends headers, before its handler runs, so the handler takes it off again.
 */
export async function startForbiddingRateLimit(options: ForbiddingRateLimitOptions): Promise<RunningLimiter> {
  const { resource } = options;
  const tellUsage = (req: express.Request, res: express.Response) => {
    const info = (req as express.Request & { rateLimit?: RateLimitInfo }).rateLimit;
    if (resource === undefined || !info) return;
    res.setHeader('x-ratelimit-used', String(info.used));
    res.setHeader('x-ratelimit-resource', resource);
  };
  const app = express();
  app.use(
    rateLimit({
      windowMs: options.windowMs ?? 10_000,
      limit: options.limit ?? 10,
      standardHeaders: false,
      legacyHeaders: true,
      statusCode: options.statusCode ?? 403,
      message: { message: 'API rate limit exceeded' },
      handler: (req, res, _next, used) => {
        res.removeHeader('Retry-After');
        tellUsage(req, res);
        res.status(used.statusCode).json(used.message);
      },
      keyGenerator: (req) => keyOf(req.headers.authorization, ipKeyGenerator(req.ip ?? '127.0.0.1')),
      validate: { keyGeneratorIpFallback: false },
    }),
  );
  app.use((req, res, next) => {
    tellUsage(req, res);
    next();
  });
  return serveBehind(app, options.upstream);
}

export interface SlidingLogOptions {
  upstream: string;
  /** Each a moving window of its own, all enforced at once: a request is admitted when each has room. */
  windows: { limit: number; windowMs: number }[];
}

/**
 * rolling-rate-limiter's in-memory limiter, one per window, stacked: a true sliding log. Each
 * admitted request is logged (to the microsecond) in every window, and its slot comes back exactly
 * one window after it; there is no reset. A refusal is a 429 with the JSON body
 * `{"message": "Too Many Requests"}` and Retry-After, in whole seconds rounded up, until each window
 * that refused has room again; no other header, on a refusal or an admission.
 *
 * The library logs every attempt, refused ones too (its README says so: a client that keeps trying
 * too fast is refused until it pauses). This limiter logs admitted requests only: it asks every window
 * `wouldLimit` (which logs nothing) and logs the request in each with `limit` only once all have
 * room, so that no window counts what another refused. The two steps are in-memory promises with no
 * I/O between them, so no other request is judged in between. The library's own wait
 * (`millisecondsUntilAllowed`) assumes refusals are logged (it waits for the second-oldest entry when
 * full), so Retry-After is read from the log itself: the oldest entry's return.
 */
export async function startSlidingLog(options: SlidingLogOptions): Promise<RunningLimiter> {
  if (options.windows.length === 0) throw new Error('a sliding log wants one window or more');
  const logs = options.windows.map(
    (w) => new InMemoryRateLimiter({ interval: w.windowMs, maxInInterval: w.limit }),
  );
  const untilRoomUs = (log: InMemoryRateLimiter, key: string) => {
    const now = getCurrentMicroseconds();
    const inWindow = (log.storage[key] ?? []).filter((t) => t > now - log.interval);
    const leaving = inWindow[inWindow.length - log.maxInInterval];
    return leaving === undefined ? 0 : leaving + log.interval - now;
  };
  const app = express();
  app.use(async (req, res, next) => {
    const key = keyOf(req.headers.authorization, req.ip ?? '127.0.0.1');
    const refusing = await Promise.all(logs.map((log) => log.wouldLimit(key)));
    if (refusing.some(Boolean)) {
      const waitUs = Math.max(...logs.map((log, i) => (refusing[i] ? untilRoomUs(log, key) : 0)));
      res.setHeader('Retry-After', String(Math.max(0, Math.ceil(waitUs / 1e6))));
      res.status(429).json({ message: 'Too Many Requests' });
      return;
    }
    await Promise.all(logs.map((log) => log.limit(key)));
    next();
  });
  const running = await serveBehind(app, options.upstream);
  return {
    url: running.url,
    stop: async () => {
      await running.stop();
      // Each key's log holds a timer (not unref'd) that would keep the process up to a window longer.
      for (const log of logs) for (const key of Object.keys(log.ttls)) await log.clear(key);
    },
  };
}

export interface VarnishThrottleOptions {
  /** A plain http://host:port, no path: a Varnish backend is an address. */
  upstream: string;
  /** The bucket's tokens: `limit` back to back, refilled at `limit` per `periodS`. */
  limit: number;
  periodS: number;
  /** How long a key is refused from its first excess; 0 for no block. */
  blockS: number;
  /** The status of a refusal; 429 by default. */
  status?: number;
}

/** A VCL duration, whole milliseconds: it takes a number and a unit, and nothing else is interpolated. */
function vclDuration(seconds: number, name: string, least: number): string {
  if (!(Number.isFinite(seconds) && seconds >= least))
    throw new Error(`varnish ${name} ${seconds}: want seconds, ${least} or more`);
  return `${Math.round(seconds * 1000)}ms`;
}

/**
 * Debian's Varnish (a caching proxy) with varnish-modules' vsthrottle in front of the upstream:
 * `vsthrottle.is_denied(key, limit, period, block)` on the request's Authorization header, a token
 * bucket of `limit` tokens refilled at `limit` per `period` (in whole tokens). Once a key's bucket
 * is empty, its next request starts a block of `blockS`, and every request of the key is refused
 * until the block ends however many tokens have come back; a request inside the block does not
 * prolong it, but it does spend a token if there is one (vmod_vsthrottle.c), so a key that keeps
 * trying may find its bucket empty when the block ends, and be blocked again at once. A refusal is
 * a synthetic `status` (429 by default) with the JSON body `{"message": "Too Many Requests"}` and,
 * with a block, Retry-After: the block's remaining time from `vsthrottle.blocked()`, in whole seconds
 * rounded up; Varnish's own Server, X-Varnish and Date beside it, and no rate-limit header.
 * Admitted requests all pass to the upstream (nothing is cached), answered with Varnish's Via,
 * X-Varnish and Age added.
 */
export async function startVarnishThrottle(
  options: VarnishThrottleOptions,
): Promise<RunningLimiter & { pid: number }> {
  const { hostname, port } = new URL(proxyTarget(options.upstream));
  if (new URL(options.upstream).pathname !== '/' || !/^[\d.]+$/.test(hostname) || !port)
    throw new Error(`varnish upstream ${options.upstream}: want http://<IPv4>:<port>, no path`);
  if (!(Number.isInteger(options.limit) && options.limit >= 1))
    throw new Error(`varnish limit ${options.limit}: want a whole number, 1 or more`);
  const status = options.status ?? 429;
  if (!(Number.isInteger(status) && status >= 400 && status <= 599))
    throw new Error(`varnish status ${status}: want 400 to 599`);
  const bucket = [
    'req.http.X-Throttle-Key',
    options.limit,
    vclDuration(options.periodS, 'periodS', 0.001),
    vclDuration(options.blockS, 'blockS', 0),
  ].join(', ');
  const varnish = await startVarnish(
    () => `vcl 4.1;
import std;
import vsthrottle;

backend upstream { .host = "${hostname}"; .port = "${port}"; }

sub vcl_recv {
  # One bucket per API key; a request without one is counted by its address.
  if (req.http.Authorization) {
    set req.http.X-Throttle-Key = "key:" + req.http.Authorization;
  } else {
    set req.http.X-Throttle-Key = "ip:" + client.ip;
  }
  if (vsthrottle.is_denied(${bucket})) {
    return (synth(${status}));
  }
  # A limiter in front, not a cache: the upstream answers every request it lets through.
  return (pass);
}

sub vcl_backend_fetch {
  unset bereq.http.X-Throttle-Key;
}

sub vcl_synth {
  ${options.blockS > 0 ? `set resp.http.Retry-After = std.integer(duration = vsthrottle.blocked(${bucket}) + 999ms);` : ''}
  set resp.http.Content-Type = "application/json";
  set resp.body = """{"message":"Too Many Requests"}""";
  return (deliver);
}
`,
  );
  return { url: `http://127.0.0.1:${varnish.port}`, pid: varnish.pid, stop: varnish.stop };
}
