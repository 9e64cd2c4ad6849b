import type { FastifyReply } from 'fastify';
import { formatDeprecation, formatSunset } from '../api/deprecation-headers.ts';
import { formatHttpDate } from '../api/http-date.ts';
import type { Plan } from '../api/plans.ts';
import { type Dialect, type RateLimitView, writeRateLimit } from '../api/rate-limit-dialect.ts';
import { RATE_LIMIT_HEADER } from '../api/rate-limit-headers.ts';
import type { FaultOptions } from './faults.ts';
import type { LimitDecision } from './rate-limiter.ts';

/** How the server tells the quota: its dialect, the faults that bend it, and whether refusals say when. */
export interface QuotaTelling {
  dialect: Dialect | 'none';
  faults: FaultOptions;
  /** `--no-refusal-retry-after`: refusals go without Retry-After, as nginx's 503 does. */
  retryAfter: boolean;
  /** The plan decided on: its windows are the policies the IETF dialects declare. */
  plan?: Plan | undefined;
}

/**
 * Writes the quota in the server's dialect (and Retry-After on a refusal) from the limiter's
 * decision. Header values are whole seconds, rounded up, so that a client waiting for them never
 * comes back before the quota has: with time-scaled windows this makes them coarse, never early.
 * The header faults are the seed dialect's; Retry-After's and the omitted header's hold in all.
 */
export function writeRateLimitHeaders(
  reply: FastifyReply,
  d: LimitDecision,
  now: number,
  { dialect, faults, retryAfter, plan }: QuotaTelling,
): void {
  if (dialect === 'seed') writeSeedHeaders(reply, d, now, faults);
  else if (dialect !== 'none') reply.headers(writeRateLimit(viewOf(d, now, plan), dialect, now));
  if (d.retryAt !== undefined && retryAfter && !faults.noRetryAfter) {
    const seconds = Math.max(1, Math.ceil((d.retryAt - now) / 1000)) + (faults.retryAfterMismatch ?? 0);
    reply.header(RATE_LIMIT_HEADER.retryAfter, seconds);
  }
  if (d.retryAt !== undefined && faults.cacheable429) reply.header('cache-control', 'public, max-age=60');
  if (faults.omitHeader) reply.removeHeader(faults.omitHeader);
}

function writeSeedHeaders(reply: FastifyReply, d: LimitDecision, now: number, faults: FaultOptions): void {
  const resetSeconds = faults.resetAsDelta
    ? Math.ceil((d.resetAt - now) / 1000)
    : Math.ceil(d.resetAt / 1000);
  reply.header(RATE_LIMIT_HEADER.limit, d.limit);
  reply.header(RATE_LIMIT_HEADER.remaining, d.remaining + (faults.wrongRemaining ?? 0));
  reply.header(RATE_LIMIT_HEADER.reset, Math.max(0, resetSeconds));
}

/** The decision as the IETF dialects say it: the plan's windows are its policies, named as in the plan. */
function viewOf(d: LimitDecision, now: number, plan: Plan | undefined): RateLimitView {
  const policies = (plan?.windows ?? []).map((w) => ({
    name: w.name,
    quota: w.limit,
    // Time-scaled windows may last a fraction of a second; the field takes whole seconds.
    windowSeconds: Math.max(1, Math.round(w.seconds)),
  }));
  // By its limit first, so that a fault that describes another window is told as that window.
  const described =
    plan?.windows.find((w) => w.limit === d.limit) ?? plan?.windows.find((w) => w.name === d.policy);
  return {
    dialect: 'none',
    alsoSent: [],
    limit: d.limit,
    remaining: d.remaining,
    resetSeconds: Math.max(0, Math.ceil((d.resetAt - now) / 1000)),
    ...(described ? { policy: described.name } : {}),
    policies,
    malformed: [],
  };
}

export interface DeprecationInfo {
  deprecation: Date | undefined;
  sunset: Date | undefined;
}

/** RFC 9745 Deprecation, RFC 8594 Sunset and the `Link rel="sunset"` that points at the document. */
export function writeDeprecationHeaders(
  reply: FastifyReply,
  info: DeprecationInfo,
  faults: FaultOptions = {},
): void {
  if (info.deprecation) {
    const value = faults.badDeprecation
      ? formatHttpDate(info.deprecation)
      : formatDeprecation(info.deprecation);
    reply.header('deprecation', value);
  }
  if (info.sunset) {
    reply.header('sunset', formatSunset(info.sunset));
    if (!faults.noSunsetLink) reply.header('link', '</openapi.yaml>; rel="sunset"');
  }
}
