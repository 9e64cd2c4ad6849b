import { parseDeprecation, parseSunset } from '../../api/deprecation-headers.ts';
import { isErrorObject } from '../../api/error-object.ts';
import { RATE_LIMIT_HEADER } from '../../api/rate-limit-headers.ts';
import { parseRetryAfter } from '../../api/retry-after.ts';
import { type Check, SKIP } from './check.ts';

const RATE_LIMIT_NAMES = [RATE_LIMIT_HEADER.limit, RATE_LIMIT_HEADER.remaining, RATE_LIMIT_HEADER.reset];
const SEED_LIMITS = 'seed: Limits, rate limit headers';

/** The checks evaluated on every response, in report order. */
export const CHECKS: readonly Check[] = [
  {
    id: 'ratelimit-headers-present',
    rule: 'X-RateLimit-Limit, -Remaining and -Reset are present on every response, each one integer',
    source: `${SEED_LIMITS} ("present on every response")`,
    // The client has parsed these headers already (strictly: undefined when absent or not an integer).
    evaluate: ({ rateLimit }) => {
      if (
        rateLimit.limit !== undefined &&
        rateLimit.remaining !== undefined &&
        rateLimit.reset !== undefined
      ) {
        return undefined;
      }
      const bad = RATE_LIMIT_NAMES.filter(
        (_, i) => [rateLimit.limit, rateLimit.remaining, rateLimit.reset][i] === undefined,
      );
      return `missing or not an integer: ${bad.join(', ')}`;
    },
  },
  {
    id: 'ratelimit-remaining-bounds',
    rule: '0 <= X-RateLimit-Remaining <= X-RateLimit-Limit',
    source: SEED_LIMITS,
    evaluate: ({ rateLimit: { limit, remaining } }) => {
      if (limit === undefined || remaining === undefined) return SKIP;
      return remaining <= limit ? undefined : `Remaining ${remaining} > Limit ${limit}`;
    },
  },
  {
    id: 'ratelimit-limit-matches-plan',
    rule: "X-RateLimit-Limit equals one of the plan's limits (per minute or per day)",
    source: 'seed: Limits, rate limits by plan',
    evaluate: ({ rateLimit: { limit }, windows }) => {
      if (limit === undefined || windows.length === 0) return SKIP;
      return windows.some((w) => w.limit === limit)
        ? undefined
        : `Limit ${limit} is none of ${windows.map((w) => w.limit).join(', ')}`;
    },
  },
  {
    id: 'ratelimit-reset-in-window',
    rule: 'X-RateLimit-Reset is a Unix time in seconds, no earlier than now and no later than now + the longest window',
    source: `${SEED_LIMITS} ("Unix timestamp at which the limit resets")`,
    evaluate: ({ rateLimit: { reset }, windows, nowSeconds, status }) => {
      if (reset === undefined || windows.length === 0) return SKIP;
      // A ban resets later than any window; its own bound is Retry-After's.
      if (status === 429) return SKIP;
      // A loop, not Math.max(...map()): this runs on every response.
      let longest = 0;
      for (const w of windows) if (w.seconds > longest) longest = w.seconds;
      if (reset < nowSeconds - 1) return `Reset ${reset} is ${Math.round(nowSeconds - reset)} s in the past`;
      if (reset > nowSeconds + longest + 1)
        return `Reset ${reset} is more than one window (${longest} s) ahead`;
      return undefined;
    },
  },
  {
    id: 'retry-after-on-429',
    rule: 'A 429 carries Retry-After as delay-seconds or an IMF-fixdate HTTP-date',
    source: 'seed: Errors (429) and RFC 9110 section 10.2.3',
    evaluate: ({ status, headers }) => {
      if (status !== 429) return SKIP;
      const value = headers[RATE_LIMIT_HEADER.retryAfter];
      if (value === undefined) return 'no Retry-After';
      return parseRetryAfter(value)
        ? undefined
        : `Retry-After '${String(value)}' is neither delay-seconds nor an HTTP-date`;
    },
  },
  {
    id: 'error-body',
    rule: 'An error response (4xx, 5xx) has an Error body {code, message, status} with status equal to the HTTP status',
    source: 'seed: Errors, Error object',
    evaluate: ({ status, attempt }) => {
      if (status < 400) return SKIP;
      const json = attempt.body.json;
      if (!isErrorObject(json)) return 'body is not an Error object';
      return json.status === status ? undefined : `body status ${json.status} != HTTP ${status}`;
    },
  },
  {
    id: 'json-content-type',
    rule: 'A response with a body declares Content-Type application/json',
    source: 'seed: "All bodies are JSON"',
    evaluate: ({ headers, attempt }) => {
      if (attempt.body.text === '') return SKIP;
      const type = String(headers['content-type'] ?? '');
      return /^application\/json\b/i.test(type) ? undefined : `Content-Type '${type}'`;
    },
  },
  {
    id: 'deprecation-headers',
    rule: 'A deprecated operation sends Deprecation as @<unix-seconds> and Sunset as an IMF-fixdate no earlier than it',
    source: 'RFC 9745 (Deprecation), RFC 8594 (Sunset); seed: Versioning',
    evaluate: ({ op, headers }) => {
      if (!op.deprecated) return SKIP;
      const deprecation = parseDeprecation(headers.deprecation);
      const sunset = parseSunset(headers.sunset);
      if (!deprecation)
        return headers.deprecation === undefined ? 'no Deprecation' : `Deprecation '${headers.deprecation}'`;
      if (!sunset) return headers.sunset === undefined ? 'no Sunset' : `Sunset '${headers.sunset}'`;
      return sunset >= deprecation ? undefined : 'Sunset is earlier than Deprecation';
    },
  },
];
