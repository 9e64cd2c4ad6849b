import express from 'express';
import { ipKeyGenerator, type RateLimitInfo, rateLimit } from 'express-rate-limit';
import { keyOf, type RunningLimiter, serveBehind } from './limiters.ts';

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
