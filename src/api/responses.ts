import type { RateLimitView } from './rate-limit-dialect.ts';
import type { HeaderValue } from './rate-limit-headers.ts';
import { parseRetryAfter, retryAfterDelayMs } from './retry-after.ts';

/**
 * What an answer means to a client of a rate-limited API, decided once, here, for the client, the
 * recorder, the checks, `capacity` and the reports: every room switches on the kind, never on a
 * status. The rules are data (RESPONSE_RULES); the decisions are pure functions of one answer.
 *
 * - `admitted`: the limiter let the request through, whatever the API then said (2xx, 404, a bare 403);
 * - `refused`: the limiter's refusal (429, or another status with a sign of one, or a status the
 *   user named with `--refusal-status`);
 * - `unexplained`: a 503 with no sign of a limiter (a headerless limiter, or an overloaded target):
 *   the client keeps away as after a refusal, the figures keep it apart;
 * - `server-error`: any other 5xx; `transport-error`: no answer at all (status 0).
 */
export const RESPONSE_KINDS = [
  'admitted',
  'refused',
  'unexplained',
  'server-error',
  'transport-error',
] as const;
export type ResponseKind = (typeof RESPONSE_KINDS)[number];

export const RESPONSE_RULES = Object.freeze({
  /** A refusal whatever it carries (the seed's contract, RFC 6585). */
  alwaysRefusal: 429,
  /**
   * A refusal when it carries a sign of one: Retry-After (RFC 9110 defines it for 503 as for 429),
   * rate-limit fields saying none remain, or (503) an IETF problem type. nginx's limit_req answers
   * 503 by default; a well-known public API refuses with 403.
   */
  refusalWithSign: Object.freeze([503, 403]),
  /** The status whose refusal without a sign is ambiguous: a headerless limiter, or overload. */
  ambiguous: 503,
  /** A status that, bare, is an authorization failure, unless it comes to a key admitted before. */
  bareRefusalHint: 403,
  /** draft-ietf-httpapi-ratelimit-headers: the problem types of a limiter's refusal. */
  problemTypes: Object.freeze(['quota-exceeded', 'temporary-reduced-capacity']),
  /** Methods a 5xx or a transport error may retry (RFC 9110 section 9.2.2). */
  idempotent: Object.freeze(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']),
  /** Retries of one call after the limiter's refusals: each waits at least the server's delay. */
  maxRefusalRetries: 5,
  /**
   * Full-jitter backoff after a refusal that says neither Retry-After nor a reset: slower than for a
   * 5xx, because hurried retries after a refusal are what the seed's ban punishes.
   */
  refusalBackoffBaseMs: 1000,
  refusalBackoffCapMs: 60_000,
  /** Added to a told wait: servers tell whole seconds, and their clock ticks apart from ours. */
  toldWaitMarginMs: 5,
});

/** One answer as the classifier reads it: its status (0: none), its headers, its quota fields read once. */
export interface ResponseSeen {
  status: number;
  headers?: Record<string, HeaderValue> | undefined;
  view?: RateLimitView | undefined;
  /** The body, its JSON read only for a 503 without another sign (a problem type). */
  body?: { readonly json: unknown };
}

/** The statuses the user named as the limiter's (`--refusal-status`), for a target that refuses its own way. */
export type RefusalStatuses = ReadonlySet<number>;

export const NO_REFUSAL_STATUSES: RefusalStatuses = new Set();

export function classifyResponse(
  r: ResponseSeen,
  named: RefusalStatuses = NO_REFUSAL_STATUSES,
): ResponseKind {
  const status = r.status;
  if (status === 0) return 'transport-error';
  if (status === RESPONSE_RULES.alwaysRefusal || (named.size > 0 && named.has(status))) return 'refused';
  if (RESPONSE_RULES.refusalWithSign.includes(status) && hasRefusalSign(r)) return 'refused';
  if (status === RESPONSE_RULES.ambiguous) return 'unexplained';
  return status >= 500 ? 'server-error' : 'admitted';
}

/**
 * A 5xx or no answer: the figures' errors, a limiter's refusal in a 503 among them (load balancers
 * and CDNs answer overload and upkeep with 503 and Retry-After: an errors threshold must not pass it).
 */
export const isError = (kind: ResponseKind, status: number): boolean =>
  kind === 'transport-error' || status >= 500;

/** The limiter let it through: it counts against the quota, whatever the API made of it. */
export const passedLimiter = (kind: ResponseKind): boolean => kind === 'admitted' || kind === 'server-error';

/**
 * A bare 403 of a key the limiter had admitted: HAProxy's `http-request deny` and several framework
 * limiters refuse so by default, so the figures point at `--refusal-status 403` when it happens.
 */
export const mayBeBareRefusal = (kind: ResponseKind, status: number): boolean =>
  kind === 'admitted' && status === RESPONSE_RULES.bareRefusalHint;

/** A refusal, or an answer the client must keep away after as if it were one (a bare 503). */
export const keepsAway = (kind: ResponseKind): boolean => kind === 'refused' || kind === 'unexplained';

function hasRefusalSign(r: ResponseSeen): boolean {
  if (parseRetryAfter(r.headers?.['retry-after']) !== undefined) return true;
  if (r.view?.remaining === 0) return true;
  return r.status === RESPONSE_RULES.ambiguous && isLimiterProblem(r.body?.json);
}

/** `{"type": "https://iana.org/assignments/http-problem-types#quota-exceeded", ...}` and the like. */
function isLimiterProblem(json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return false;
  const type = (json as { type?: unknown }).type;
  if (typeof type !== 'string') return false;
  return RESPONSE_RULES.problemTypes.some(
    (name) => type === name || type.endsWith(`#${name}`) || type.endsWith(`/${name}`),
  );
}

/**
 * Exponential backoff with "full jitter" (a uniformly random delay in [0, min(cap, base * 2^n))):
 * of the common jitter schemes it spreads retries from many clients best, so they do not come back
 * in a wave and trip the limit again.
 */
export function fullJitterMs(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return random() * ceiling;
}

/** What the server told of when to come back after a refusal, as read from its answer. */
export interface ToldWait {
  /** The Retry-After header as sent. */
  retryAfter?: HeaderValue;
  /** A reset its rate-limit fields announced (epoch ms), and how it was written, for the record. */
  resetAt?: number;
  resetBy?: string;
}

export interface RefusalBackoff {
  baseMs: number;
  capMs: number;
  random?: () => number;
}

/**
 * How long a refusal keeps the key away, and who said so: Retry-After if valid (never shortened),
 * else until the reset its rate-limit fields announce, else full-jitter backoff on the key's
 * refusals in a row. A small margin covers the server's clock granularity.
 */
export function waitAfterRefusal(
  told: ToldWait,
  at: number,
  refusalsInRow: number,
  backoff: RefusalBackoff,
): { ms: number; by: string } {
  const margin = RESPONSE_RULES.toldWaitMarginMs;
  const retryAfter = parseRetryAfter(told.retryAfter);
  if (retryAfter)
    return {
      ms: retryAfterDelayMs(retryAfter, at) + margin,
      by: `Retry-After ${retryAfter.form === 'seconds' ? `${retryAfter.seconds} s` : String(told.retryAfter).trim()}`,
    };
  if (told.resetAt !== undefined && told.resetAt > at)
    return { ms: told.resetAt - at + margin, by: told.resetBy ?? 'reset' };
  return {
    ms: fullJitterMs(refusalsInRow, backoff.baseMs, backoff.capMs, backoff.random) + margin,
    by: `backoff after ${refusalsInRow} refusal${refusalsInRow === 1 ? '' : 's'}`,
  };
}

/**
 * A server error, a bare 503 (overload, perhaps) or a transport error of an idempotent method may be
 * tried again (within a budget): a POST that reached a server is not sent twice. While a run
 * prepares (setup, teardown), a bare 503 is tried again whatever the method: most likely a
 * headerless limiter's (nginx's as it ships) that a busy machine's late request met, and a record
 * of the setup's made twice harms less than a run that cannot start.
 */
export const retriesAfterError = (kind: ResponseKind, method: string, preparing = false): boolean =>
  (kind === 'server-error' || kind === 'unexplained' || kind === 'transport-error') &&
  (RESPONSE_RULES.idempotent.includes(method) || (preparing && kind === 'unexplained'));
