import { declaredFor } from '../../api/declared-contract.ts';
import { parseDeprecation, parseLinks, parseSunset } from '../../api/deprecation-headers.ts';
import { isErrorObject } from '../../api/error-object.ts';
import { parseHttpDate } from '../../api/http-date.ts';
import type { LimiterKind } from '../../api/limiter-kinds.ts';
import { QUOTA_FIELDS, type RateLimitView } from '../../api/rate-limit-dialect.ts';
import { type HeaderValue, RATE_LIMIT_HEADER } from '../../api/rate-limit-headers.ts';
import { RESPONSE_RULES } from '../../api/responses.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../api/retry-after.ts';
import {
  type AttemptCheck,
  type Check,
  type CheckOutcome,
  DEFAULT_SETTLE_AFTER_MS,
  NOT_DECLARED,
  SKIP,
} from './check.ts';
import { clientChecks } from './client-checks.ts';
import {
  type Contract,
  DEFAULT_CONTRACT,
  declaredMismatch,
  declaredQuota,
  dialectMatchesContractCheck,
  keepsDeclared,
  mismatch,
} from './contract.ts';
import { shownReset } from './quota.ts';
import { responseSchemaCheck } from './schema-check.ts';
import { statefulChecks } from './stateful.ts';

const SEED_LIMITS = 'seed: Limits, rate limit headers';

/** Retry-After and the quota's Reset may differ by the rounding of each (1 s) and 1 s of clocks and latency. */
const RETRY_AFTER_RESET_TOLERANCE_MS = 2000;

function headerText(value: HeaderValue): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** Cache-Control directives, names in lower case: `public, max-age="60"` -> {public: '', max-age: '60'}. */
function cacheDirectives(value: HeaderValue): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of headerText(value).split(',')) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s,]*)))?\s*$/.exec(part);
    if (m) directives.set((m[1] as string).toLowerCase(), m[2] ?? m[3] ?? '');
  }
  return directives;
}

/** Why a response may be stored by a cache, or undefined when it may not. */
function cacheableBecause(headers: Record<string, HeaderValue>, nowMs: number): string | undefined {
  const cc = cacheDirectives(headers['cache-control']);
  if (cc.has('no-store')) return undefined;
  if (cc.has('public')) return 'Cache-Control: public';
  const seconds = (name: string) => Number.parseInt(cc.get(name) ?? '', 10);
  if (seconds('max-age') > 0) return `Cache-Control: max-age=${cc.get('max-age')}`;
  if (seconds('s-maxage') > 0 && !cc.has('private')) return `Cache-Control: s-maxage=${cc.get('s-maxage')}`;
  // max-age and s-maxage override Expires (RFC 9111 section 5.3); an invalid Expires is in the past.
  if (!cc.has('max-age') && !cc.has('s-maxage') && !cc.has('no-cache')) {
    const expires = parseHttpDate(headerText(headers.expires));
    if (expires && expires.getTime() > nowMs + 1000)
      return `Expires ${headerText(headers.expires)} is in the future`;
  }
  return undefined;
}

/** Names in a failure as the response carried them: a header as Node gives it, a structured field's member by name. */
const wireName = (name: string) => (name.includes(' ') ? name : name.toLowerCase());

const problemWith = (names: string[]) =>
  `${names.every((n) => n.startsWith('x-ratelimit-')) ? 'missing or not an integer' : 'missing or malformed'}: ${names.join(', ')}`;

/** The fields the dialect read must carry and does not, then any field not in its dialect's syntax. */
function missingFields(view: RateLimitView): string[] {
  const names: string[] = [];
  if (view.dialect !== 'none') {
    const fields = QUOTA_FIELDS[view.dialect];
    // draft-08 and later: `r` is required, `t` and the policy (where the limit is) are optional.
    const optional = view.dialect === 'ietf-8';
    if (view.limit === undefined && !optional) names.push(wireName(fields.limit));
    if (view.remaining === undefined) names.push(wireName(fields.remaining));
    if (view.resetSeconds === undefined && !optional) names.push(wireName(fields.reset));
  }
  for (const name of view.malformed) if (!names.includes(name)) names.push(name);
  return names;
}

function headersPresentCheck(contract: Contract): Check {
  if (contract === 'document') return headersDeclaredCheck();
  return {
    id: 'ratelimit-headers-present',
    rule: "The quota's Limit, Remaining and Reset are present on every response, each one integer: X-RateLimit-* in the seed's dialect, the dialect's own fields in another (ietf-8: RateLimit's r; its t and RateLimit-Policy are optional in the draft). A response with no rate-limit field at all fails here, whatever the contract",
    source: `${SEED_LIMITS} ("present on every response")`,
    evaluate: ({ rateLimitView: view }) => {
      const complete =
        view.dialect === 'ietf-8' ||
        (view.limit !== undefined && view.remaining !== undefined && view.resetSeconds !== undefined);
      if (complete && view.malformed.length === 0 && view.dialect !== 'none') return undefined;
      if (view.dialect === 'none' && view.malformed.length === 0) return mismatch(view, contract);
      return problemWith(missingFields(view));
    },
  };
}

/** The field a name of `missingFields` belongs to: `RateLimit limit` is a member of `ratelimit`. */
const fieldOf = (name: string) => (name.split(' ')[0] as string).toLowerCase();

/**
 * `--contract document`: a response carries the rate-limit fields its status declares, each in its
 * dialect's syntax, with the members its draft requires (draft 7's RateLimit: limit, remaining and
 * reset). What the document does not declare is not asked for; a declared field missing fails, as
 * `required` or not (a document that names a response header promises it).
 */
function headersDeclaredCheck(): Check {
  return {
    id: 'ratelimit-headers-present',
    rule: "The rate-limit fields the document declares for the response's operation and status (--contract document) are present, each well-formed, with the members its dialect requires (draft 7's RateLimit: limit, remaining, reset; draft 8's: r). A status that declares none is not judged (counted as not declared); a response in another dialect than declared is ratelimit-dialect-matches-contract's",
    source: "the document given (--spec): the headers each operation's responses declare",
    evaluate: (ctx): CheckOutcome => {
      const declared = declaredQuota(ctx);
      if (declared === NOT_DECLARED) return NOT_DECLARED;
      const view = ctx.rateLimitView;
      if (view.dialect === 'none' && view.malformed.length === 0) return declaredMismatch(view, declared);
      // Another dialect than declared: one defect, failed once, by the dialect check.
      if (view.dialect !== 'none' && !keepsDeclared(declared, view)) return SKIP;
      const fields = declared.rateLimit?.fields ?? [];
      const names = fields.filter((f) => ctx.headers[f] === undefined);
      for (const name of missingFields(view))
        if (fields.includes(fieldOf(name)) && !names.includes(name)) names.push(name);
      return names.length === 0 ? undefined : `${problemWith(names)} (declared for ${declared.status})`;
    },
  };
}

/** The checks of the quota's figures, each judged in the dialect the response spoke. */
const QUOTA_CHECKS: readonly Check[] = [
  {
    id: 'ratelimit-remaining-bounds',
    rule: "0 <= Remaining <= Limit (the quota's, X-RateLimit-* in the seed's dialect)",
    source: SEED_LIMITS,
    evaluate: ({ quota: { limit, remaining } }) => {
      if (limit === undefined || remaining === undefined) return SKIP;
      return remaining <= limit ? undefined : `Remaining ${remaining} > Limit ${limit}`;
    },
  },
  {
    id: 'ratelimit-limit-matches-plan',
    rule: "The quota's Limit (X-RateLimit-Limit in the seed's dialect) equals one of the plan's limits (per minute or per day)",
    source: 'seed: Limits, rate limits by plan',
    evaluate: ({ quota: { limit }, windows }) => {
      if (limit === undefined || windows.length === 0) return SKIP;
      return windows.some((w) => w.limit === limit)
        ? undefined
        : `Limit ${limit} is none of ${windows.map((w) => w.limit).join(', ')}`;
    },
  },
  {
    id: 'ratelimit-reset-in-window',
    rule: "The quota's Reset (X-RateLimit-Reset in the seed's dialect, a Unix time in seconds; in another, the time it names) is no earlier than now and no later than now + the longest window; whether it came in the promised dialect is ratelimit-dialect-matches-contract's",
    source: `${SEED_LIMITS} ("Unix timestamp at which the limit resets")`,
    evaluate: ({ rateLimitView: view, nowSeconds, windows, attempt }) => {
      const delay = view.resetSeconds;
      if (delay === undefined || windows.length === 0) return SKIP;
      // A ban resets later than any window; its own bound is Retry-After's.
      if (attempt.kind === 'refused') return SKIP;
      // A loop, not Math.max(...map()): this runs on every response.
      let longest = 0;
      for (const w of windows) if (w.seconds > longest) longest = w.seconds;
      if (delay < -1) return `${shownReset(view, nowSeconds)} is ${Math.round(-delay)} s in the past`;
      if (delay > longest + 1)
        return `${shownReset(view, nowSeconds)} is more than one window (${longest} s) ahead`;
      return undefined;
    },
  },
];

/**
 * The checks that are pure functions of one response, in report order, after the quota's. A run
 * evaluates `responseChecks()`: these, the stateful ones and the response schema.
 */
const OTHER_CHECKS: readonly Check[] = [
  {
    id: 'refusal-is-429',
    rule: 'The limiter refuses with 429 (a 503 or 403 with Retry-After or a spent quota, or a status named by --refusal-status, is its refusal in another status)',
    source: 'seed: Limits ("When the limit is exceeded, the response is 429"); RFC 6585 section 4',
    evaluate: ({ status, attempt }) => {
      if (attempt.kind !== 'refused') return SKIP;
      return status === RESPONSE_RULES.alwaysRefusal
        ? undefined
        : `refused with ${status}, not 429 as the seed's contract says`;
    },
  },
  {
    id: 'retry-after-matches-reset',
    rule: "On a refusal (a 429 or another status the limiter refused with), the time Retry-After names is no more than 2 s (1 s rounding of each, 1 s of clocks) after the quota's Reset (X-RateLimit-Reset in the seed's dialect): past the reset the quota is back, so a later Retry-After holds clients back for nothing. An earlier one is a sliding window's or a bucket's partial return; a fixed window's early one fails retry-after-retry-succeeds",
    source: `${SEED_LIMITS} (Reset: "at which the limit resets"; Retry-After: "the time after which to retry")`,
    evaluate: ({ headers, rateLimitView: view, nowSeconds, attempt }) => {
      if (attempt.kind !== 'refused' || view.resetSeconds === undefined) return SKIP;
      const retryAfter = parseRetryAfter(headers[RATE_LIMIT_HEADER.retryAfter]);
      if (!retryAfter) return SKIP;
      // Both from the receive time: a delay of either kind is compared without the round trip.
      const difference = retryAfterDelayMs(retryAfter, attempt.receivedAt) - view.resetSeconds * 1000;
      if (difference <= RETRY_AFTER_RESET_TOLERANCE_MS) return undefined;
      return `Retry-After ends ${(difference / 1000).toFixed(1)} s after ${shownReset(view, nowSeconds)}`;
    },
  },
  {
    id: 'ratelimit-429-not-cacheable',
    rule: 'A refusal of the limiter (a 429, or its refusal in another status) is not cacheable: no Cache-Control public, max-age>0 or (without private) s-maxage>0 unless no-store, and no Expires in the future',
    source: 'RFC 6585 section 4 ("MUST NOT be stored by a cache"); RFC 9111',
    evaluate: ({ headers, attempt }) => {
      if (attempt.kind !== 'refused') return SKIP;
      return cacheableBecause(headers, attempt.receivedAt);
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
  {
    id: 'sunset-link',
    rule: 'A deprecated operation sends a Link with rel="sunset" (where its retirement is described)',
    source: 'RFC 8594 section 6 (the "sunset" link relation); seed: Versioning',
    evaluate: ({ op, headers }) => {
      if (!op.deprecated) return SKIP;
      const links = parseLinks(headerText(headers.link));
      if (links.some((l) => l.rel.includes('sunset'))) return undefined;
      return headers.link === undefined ? 'no Link' : `no rel="sunset" in Link '${headerText(headers.link)}'`;
    },
  },
];

/**
 * The seed asks every refusal for a Retry-After; RFC 6585 only allows one. Under `--contract
 * document` a refusal whose status the document declares no Retry-After for is not judged.
 */
function retryAfterOn429Check(contract: Contract): Check {
  const document = contract === 'document';
  return {
    id: 'retry-after-on-429',
    rule: document
      ? 'A refusal of the limiter (a 429, or its refusal in another status) whose status the document declares Retry-After for (--contract document) carries it as delay-seconds or an IMF-fixdate HTTP-date; one declaring none is not judged (counted as not declared)'
      : 'A refusal of the limiter (a 429, or its refusal in another status) carries Retry-After as delay-seconds or an IMF-fixdate HTTP-date',
    source: document
      ? "the document given (--spec): the headers each operation's responses declare; RFC 9110 section 10.2.3"
      : 'seed: Errors (429) and RFC 9110 section 10.2.3',
    evaluate: ({ headers, attempt, op, status }) => {
      if (attempt.kind !== 'refused') return SKIP;
      if (document && declaredFor(op.declared, status)?.retryAfter !== true) return NOT_DECLARED;
      const value = headers[RATE_LIMIT_HEADER.retryAfter];
      if (value === undefined) return 'no Retry-After';
      return parseRetryAfter(value)
        ? undefined
        : `Retry-After '${String(value)}' is neither delay-seconds nor an HTTP-date`;
    },
  };
}

/** The checks that are pure functions of one response, for one contract, in report order. */
export function catalogue(contract: Contract = DEFAULT_CONTRACT): readonly Check[] {
  const [refusalIs429, ...afterRefusal] = OTHER_CHECKS;
  return [
    headersPresentCheck(contract),
    dialectMatchesContractCheck(contract),
    ...QUOTA_CHECKS,
    refusalIs429 as Check,
    retryAfterOn429Check(contract),
    ...afterRefusal,
  ];
}

/** The catalogue under the seed's contract (the default). */
export const CHECKS: readonly Check[] = catalogue();

export interface RunChecksOptions {
  /** The dialect the rate-limit checks judge as promised (`run --contract`); default the seed's. */
  contract?: Contract;
  /** Bodies validated per operation per second (response-schema). */
  schemaPerSecond?: number;
  /** How long deferred verdicts wait for the requests in flight around them (the client's timeout and more). */
  settleAfterMs?: number;
  /** The target's limiter when given (`--limiter`): a bucket's or a sliding log's Remaining may rise. */
  limiter?: LimiterKind;
}

/** Every response check of one run, fresh (several keep state), in report order. */
export function responseChecks(options: RunChecksOptions = {}): Check[] {
  const stateful = statefulChecks(options.settleAfterMs ?? DEFAULT_SETTLE_AFTER_MS, options.limiter);
  const checks = catalogue(options.contract);
  const at = checks.findIndex((c) => c.id === 'retry-after-on-429');
  return [
    ...checks.slice(0, at),
    ...stateful,
    ...checks.slice(at),
    responseSchemaCheck(options.schemaPerSecond),
  ];
}

/** The ids of every check a run reports, response checks then the client's, in report order. */
export function allCheckIds(): string[] {
  const checks: (Check | AttemptCheck)[] = [...responseChecks(), ...clientChecks()];
  return checks.map((c) => c.id);
}
