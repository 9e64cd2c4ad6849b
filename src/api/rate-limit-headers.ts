/** Header names as Node and undici give them to us: lower case. */
export const RATE_LIMIT_HEADER = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
  retryAfter: 'retry-after',
} as const;

export type HeaderValue = string | string[] | undefined;

/**
 * A header that must carry one non-negative integer. Anything else (a list, a sign, a fraction,
 * white space inside) is a malformed value, reported as such rather than coerced.
 */
export function parseIntegerHeader(value: HeaderValue): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

export interface RateLimitState {
  /** The limit that applies (seed: "X-RateLimit-Limit"). */
  limit: number | undefined;
  /** Requests left in the current window. */
  remaining: number | undefined;
  /** Unix time in seconds at which the window resets. */
  reset: number | undefined;
  /** The length of the window `remaining` counts down, when the server declares it (a policy's `w`). */
  windowSeconds?: number;
  /** A policy counted in concurrent requests: the key's requests in flight at most. */
  maxInFlight?: number;
  /**
   * The answer's headers and the dialect read from them (absent where the state was not read from an
   * answer): kept by reference, so that what held a key can be named in the server's own words
   * (`toldFields`) once, when it holds, and not described for every response.
   */
  headers?: Record<string, HeaderValue> | undefined;
  dialect?: string | undefined;
}

/**
 * The seed's rate-limit headers of a response (`X-RateLimit-Limit`, `-Remaining`, `-Reset`), each
 * undefined when absent or not an integer. (The client and the checks read every dialect; this reads
 * the seed's.)
 *
 * @example
 * const { remaining, reset } = readRateLimitHeaders((await api.listPets()).headers);
 */
export function readRateLimitHeaders(headers: Record<string, HeaderValue>): RateLimitState {
  return {
    limit: parseIntegerHeader(headers[RATE_LIMIT_HEADER.limit]),
    remaining: parseIntegerHeader(headers[RATE_LIMIT_HEADER.remaining]),
    reset: parseIntegerHeader(headers[RATE_LIMIT_HEADER.reset]),
  };
}
