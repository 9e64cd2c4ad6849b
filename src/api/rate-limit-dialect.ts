import {
  type BareItem,
  type Item,
  type Parameters,
  parseDictionary,
  parseItem,
  parseList,
  serializeDictionary,
  serializeItem,
  serializeList,
  Token,
} from 'structured-headers';
import { type HeaderValue, parseIntegerHeader, type RateLimitState } from './rate-limit-headers.ts';

/**
 * The ways servers tell a client its quota, as found in the wild:
 * - `seed`: X-RateLimit-Limit/-Remaining/-Reset, Reset a Unix time in seconds (the pet store's seed);
 * - `seconds-until`: the same names, Reset the seconds until the reset (@fastify/rate-limit, many gateways);
 * - `unix-ms`: the same names, Reset a Unix time in milliseconds;
 * - `ietf-8`: draft-ietf-httpapi-ratelimit-headers-08 and later, `RateLimit: "name";r=..;t=..` and
 *   `RateLimit-Policy: "name";q=..;w=..` (Structured Fields lists);
 * - `ietf-7`: draft-07, `RateLimit: limit=.., remaining=.., reset=..` (a dictionary) and
 *   `RateLimit-Policy: 100;w=60`;
 * - `ietf-6`: draft-06, `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds until).
 */
export const DIALECTS = ['seed', 'seconds-until', 'unix-ms', 'ietf-8', 'ietf-7', 'ietf-6'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** A quota a server declares: so many units per window. */
export interface QuotaPolicy {
  /** The policy's name (ietf-8 and later); draft-07 and -06 policies have none. */
  name?: string;
  quota: number;
  windowSeconds?: number;
  /**
   * What `quota` counts (the drafts' `qu`): absent means requests; `concurrent-requests` is a
   * concurrency limit (no window), `content-bytes` a volume. Only requests are a rate to pace by.
   */
  unit?: string;
}

/** A policy's quota counts requests over a window (the default unit), not bytes or requests in flight. */
const countsRequests = (p: QuotaPolicy | undefined) =>
  p === undefined || p.unit === undefined || p.unit === 'requests';

/** One response's rate-limit headers, whatever dialect they came in. */
export interface RateLimitView {
  /** The dialect read; `none` when the response said nothing of its quota. */
  dialect: Dialect | 'none';
  /** Other dialects the same response also sent (express-rate-limit sends legacy and IETF fields together). */
  alsoSent: Dialect[];
  /** The quota that `remaining` counts down. */
  limit?: number;
  remaining?: number;
  /** Seconds from the response until the quota resets (negative: a reset announced in the past). */
  resetSeconds?: number;
  /** ietf-8: the policy `remaining` belongs to. */
  policy?: string;
  policies: QuotaPolicy[];
  /** Header names present but not in their dialect's syntax: read as absent. */
  malformed: string[];
}

/**
 * An X-RateLimit-Reset is told apart by magnitude: a Unix time in seconds is past 1e9 (2001) and
 * below 1e12, one in milliseconds past 1e12; a delay of 1e9 seconds (31 years) is no window.
 */
const UNIX_SECONDS_FROM = 1e9;
const UNIX_MS_FROM = 1e12;

type Headers = Record<string, HeaderValue>;

const text = (value: HeaderValue): string | undefined =>
  typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : undefined;

const wholeNumber = (value: BareItem | undefined): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

const nameOf = (value: BareItem): string | undefined =>
  typeof value === 'string' ? value : value instanceof Token ? value.toString() : undefined;

function orUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Structured Fields parse errors make the header absent, and named. */
function structured<T>(headers: Headers, name: string, parse: (s: string) => T, malformed: string[]) {
  const value = text(headers[name]);
  if (value === undefined) return undefined;
  const parsed = orUndefined(() => parse(value));
  if (parsed === undefined) malformed.push(name);
  return parsed;
}

function readPolicies(headers: Headers, malformed: string[]): QuotaPolicy[] {
  const list = structured(headers, 'ratelimit-policy', parseList, malformed) ?? [];
  const policies: QuotaPolicy[] = [];
  for (const [value, params] of list) {
    if (Array.isArray(value)) continue;
    // ietf-8: "name";q=..;w=..  draft-07 and -06: 100;w=60
    const named = nameOf(value);
    const quota = named === undefined ? wholeNumber(value) : wholeNumber(params.get('q'));
    if (quota === undefined) continue;
    const windowSeconds = wholeNumber(params.get('w'));
    const qu = params.get('qu');
    const unit = qu === undefined ? undefined : nameOf(qu);
    policies.push({
      ...(named === undefined ? {} : { name: named }),
      quota,
      ...(windowSeconds === undefined ? {} : { windowSeconds }),
      ...(unit === undefined ? {} : { unit }),
    });
  }
  return policies;
}

/** What one dialect's fields said, before the view is put together. */
type Reading = Pick<RateLimitView, 'limit' | 'remaining' | 'resetSeconds' | 'policy'>;

/** ietf-8: of several policies in `RateLimit`, the one closest to exhaustion governs. */
function readIetf8(list: ReturnType<typeof parseList>, policies: QuotaPolicy[]): Reading | undefined {
  let best: Reading | undefined;
  for (const [value, params] of list) {
    if (Array.isArray(value)) continue;
    const name = nameOf(value);
    const remaining = wholeNumber(params.get('r'));
    if (name === undefined || remaining === undefined) continue;
    if (best?.remaining !== undefined && best.remaining <= remaining) continue;
    const policy = policies.find((p) => p.name === name);
    // Bytes or requests in flight left are no count of requests left in a window.
    if (!countsRequests(policy)) continue;
    const reset = wholeNumber(params.get('t'));
    const limit = policy?.quota;
    best = {
      policy: name,
      remaining,
      ...(limit === undefined ? {} : { limit }),
      ...(reset === undefined ? {} : { resetSeconds: reset }),
    };
  }
  return best;
}

function readIetf7(dict: ReturnType<typeof parseDictionary>): Reading | undefined {
  const member = (key: string) => {
    const m = dict.get(key);
    return m === undefined || Array.isArray(m[0]) ? undefined : wholeNumber(m[0] as BareItem);
  };
  const [limit, remaining, resetSeconds] = [member('limit'), member('remaining'), member('reset')];
  if (limit === undefined && remaining === undefined && resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds };
}

/** A draft-06 field: one Structured Fields integer, or absent (and named when malformed). */
function ietf6Member(headers: Headers, name: string, malformed: string[]): number | undefined {
  const item = structured(headers, name, parseItem, malformed);
  return item === undefined ? undefined : wholeNumber(item[0]);
}

function readIetf6(headers: Headers, malformed: string[]): Reading | undefined {
  // Most responses speak another dialect: three lookups and no allocation tell so.
  if (
    headers['ratelimit-limit'] === undefined &&
    headers['ratelimit-remaining'] === undefined &&
    headers['ratelimit-reset'] === undefined
  )
    return undefined;
  const limit = ietf6Member(headers, 'ratelimit-limit', malformed);
  const remaining = ietf6Member(headers, 'ratelimit-remaining', malformed);
  const resetSeconds = ietf6Member(headers, 'ratelimit-reset', malformed);
  if (limit === undefined && remaining === undefined && resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds };
}

/** A legacy X-RateLimit-* field: an integer, or absent (and named when present but not one). */
function legacyInt(headers: Headers, name: string, malformed: string[]): number | undefined {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const value = parseIntegerHeader(raw);
  if (value === undefined) malformed.push(name);
  return value;
}

function readLegacy(
  headers: Headers,
  nowMs: number,
  malformed: string[],
): { dialect: Dialect; view: Reading } | undefined {
  const limit = legacyInt(headers, 'x-ratelimit-limit', malformed);
  const remaining = legacyInt(headers, 'x-ratelimit-remaining', malformed);
  const reset = legacyInt(headers, 'x-ratelimit-reset', malformed);
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  let dialect: Dialect = 'seed';
  let resetSeconds: number | undefined;
  if (reset !== undefined) {
    if (reset >= UNIX_MS_FROM) {
      dialect = 'unix-ms';
      resetSeconds = (reset - nowMs) / 1000;
    } else if (reset >= UNIX_SECONDS_FROM) resetSeconds = reset - nowMs / 1000;
    else {
      dialect = 'seconds-until';
      resetSeconds = reset;
    }
  }
  return { dialect, view: { limit, remaining, resetSeconds } };
}

/** The IETF `RateLimit` field: draft-08's list of named items, or draft-07's dictionary. */
function readCombined(
  combined: string,
  policies: QuotaPolicy[],
  malformed: string[],
): { dialect: Dialect; view: Reading } | undefined {
  const asList = orUndefined(() => readIetf8(parseList(combined), policies));
  if (asList) return { dialect: 'ietf-8', view: asList };
  const asDict = orUndefined(() => readIetf7(parseDictionary(combined)));
  if (asDict) return { dialect: 'ietf-7', view: asDict };
  malformed.push('ratelimit');
  return undefined;
}

/**
 * Reads one response's rate-limit headers (lower-case names, as Node gives them) into one view.
 * When a response sends an IETF dialect beside the legacy fields, the IETF one is read (it can
 * name several policies) and the legacy one is listed in `alsoSent`. Every response of a run
 * passes here, so the common case (one dialect, no policy) makes no closure and no throwaway array.
 */
export function readRateLimit(headers: Headers, nowMs: number): RateLimitView {
  const malformed: string[] = [];
  const policies = headers['ratelimit-policy'] === undefined ? [] : readPolicies(headers, malformed);
  const combinedText = text(headers.ratelimit);
  const combined = combinedText === undefined ? undefined : readCombined(combinedText, policies, malformed);
  const six = readIetf6(headers, malformed);
  const legacy = readLegacy(headers, nowMs, malformed);
  // The first dialect found is read; the others are only named.
  const sixFound = six === undefined ? undefined : { dialect: 'ietf-6' as const, view: six };
  const first = combined ?? sixFound ?? legacy;
  const alsoSent: Dialect[] = [];
  if (sixFound && first !== sixFound) alsoSent.push('ietf-6');
  if (legacy && first !== legacy) alsoSent.push(legacy.dialect);
  // One literal with every field (undefined where not told): every response's view has one shape,
  // with its fields in the object, where fields added afterwards took a property array and a
  // shape transition each on every response.
  const r = first?.view;
  return {
    dialect: first?.dialect ?? 'none',
    alsoSent,
    limit: r?.limit,
    remaining: r?.remaining,
    resetSeconds: r?.resetSeconds,
    policy: r?.policy,
    policies,
    malformed,
  };
}

const param = (entries: [string, number | undefined][]): Parameters =>
  new Map(entries.filter((e): e is [string, number] => e[1] !== undefined));

function policyHeader(view: RateLimitView, named: boolean): string | undefined {
  if (view.policies.length === 0) return undefined;
  return serializeList(
    view.policies.map(
      (p): Item =>
        named
          ? [
              p.name ?? 'default',
              param([
                ['q', p.quota],
                ['w', p.windowSeconds],
              ]),
            ]
          : [p.quota, param([['w', p.windowSeconds]])],
    ),
  );
}

/**
 * The headers a server speaking `dialect` sends for `view` at `nowMs` (the reference server's
 * emulation, and the parser's round trip). What the dialect cannot say is left out.
 */
export function writeRateLimit(view: RateLimitView, dialect: Dialect, nowMs: number): Record<string, string> {
  const out: Record<string, string> = {};
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) out[name] = value;
  };
  const int = (n: number | undefined) => (n === undefined ? undefined : String(n));
  const reset = view.resetSeconds;
  switch (dialect) {
    case 'seed':
    case 'seconds-until':
    case 'unix-ms': {
      set('x-ratelimit-limit', int(view.limit));
      set('x-ratelimit-remaining', int(view.remaining));
      const at =
        reset === undefined
          ? undefined
          : dialect === 'seed'
            ? Math.round(nowMs / 1000 + reset)
            : dialect === 'unix-ms'
              ? Math.round(nowMs + reset * 1000)
              : Math.round(reset);
      set('x-ratelimit-reset', int(at));
      break;
    }
    case 'ietf-8': {
      set('ratelimit-policy', policyHeader(view, true));
      if (view.remaining !== undefined) {
        const name = view.policy ?? view.policies[0]?.name ?? 'default';
        set(
          'ratelimit',
          serializeItem([
            name,
            param([
              ['r', view.remaining],
              ['t', reset === undefined ? undefined : Math.round(reset)],
            ]),
          ]),
        );
      }
      break;
    }
    case 'ietf-7': {
      set('ratelimit-policy', policyHeader(view, false));
      const members = Object.entries({ limit: view.limit, remaining: view.remaining, reset })
        .filter((e): e is [string, number] => e[1] !== undefined)
        .map(([k, v]) => [k, Math.round(v)] as const);
      if (members.length > 0) set('ratelimit', serializeDictionary(Object.fromEntries(members)));
      break;
    }
    case 'ietf-6': {
      set('ratelimit-policy', policyHeader(view, false));
      set('ratelimit-limit', int(view.limit));
      set('ratelimit-remaining', int(view.remaining));
      set('ratelimit-reset', int(reset === undefined ? undefined : Math.round(reset)));
      break;
    }
  }
  return out;
}

/**
 * The view as the pacer takes it: Reset as a Unix time in seconds, as given or, from a delay, the
 * response's time plus the delay (a fraction: rounding it up again would hold a whole second more).
 */
export function quotaState(view: RateLimitView, nowMs: number, headers?: Headers): RateLimitState {
  // The headers by reference, in the literal: no allocation and no shape change for a response.
  const state: RateLimitState = {
    limit: view.limit,
    remaining: view.remaining,
    reset: view.resetSeconds === undefined ? undefined : nowMs / 1000 + view.resetSeconds,
    headers,
    dialect: view.dialect,
  };
  // The policy `remaining` belongs to: named (ietf-8), or the only one declared (drafts 6 and 7).
  const policy =
    view.policy === undefined
      ? view.policies.length === 1 && view.policies[0]?.quota === view.limit
        ? view.policies[0]
        : undefined
      : view.policies.find((p) => p.name === view.policy);
  if (policy?.windowSeconds !== undefined) state.windowSeconds = policy.windowSeconds;
  const concurrency = view.policies.find((p) => p.unit === 'concurrent-requests');
  if (concurrency !== undefined) state.maxInFlight = concurrency.quota;
  return state;
}

const X_RATELIMIT = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
};

/** The fields that tell each part of the quota, as a person would look them up in a response. */
export const QUOTA_FIELDS: Record<Dialect, { limit: string; remaining: string; reset: string }> = {
  seed: X_RATELIMIT,
  'seconds-until': X_RATELIMIT,
  'unix-ms': X_RATELIMIT,
  'ietf-8': { limit: 'RateLimit-Policy q', remaining: 'RateLimit r', reset: 'RateLimit t' },
  'ietf-7': { limit: 'RateLimit limit', remaining: 'RateLimit remaining', reset: 'RateLimit reset' },
  'ietf-6': { limit: 'RateLimit-Limit', remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset' },
};

/** The fields that told Remaining and Reset, lower case as Node gives them, per dialect. */
const TOLD_BY: Record<Dialect, readonly string[]> = {
  seed: ['x-ratelimit-remaining', 'x-ratelimit-reset'],
  'seconds-until': ['x-ratelimit-remaining', 'x-ratelimit-reset'],
  'unix-ms': ['x-ratelimit-remaining', 'x-ratelimit-reset'],
  'ietf-8': ['ratelimit'],
  'ietf-7': ['ratelimit'],
  'ietf-6': ['ratelimit-remaining', 'ratelimit-reset'],
};

/** How a person spells a field's name (Node gives them lower case). */
const SPELLED: Record<string, string> = {
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
  ratelimit: 'RateLimit',
  'ratelimit-remaining': 'RateLimit-Remaining',
  'ratelimit-reset': 'RateLimit-Reset',
};

/** A field's value as a line can carry it: a hostile server's kilobyte is cut. */
const MAX_TOLD_VALUE = 80;

/**
 * The fields an answer told its Remaining and Reset in, as it sent them, in its dialect:
 * `RateLimit remaining=0, reset=10` (the IETF drafts' one field: its name, then its members),
 * `X-RateLimit-Remaining: 0, X-RateLimit-Reset: 1767000000`. Undefined when the answer sent none of
 * them. Built when a hold is named (once a hold, or when a line asks), never per response.
 */
export function toldFields(headers: Headers, dialect: string): string | undefined {
  const names = Object.hasOwn(TOLD_BY, dialect) ? TOLD_BY[dialect as Dialect] : undefined;
  if (names === undefined) return undefined;
  const parts: string[] = [];
  for (const name of names) {
    const value = text(headers[name])?.trim();
    if (value === undefined) continue;
    const shown = value.length > MAX_TOLD_VALUE ? `${value.slice(0, MAX_TOLD_VALUE)}…` : value;
    parts.push(name === 'ratelimit' ? `RateLimit ${shown}` : `${SPELLED[name]}: ${shown}`);
  }
  return parts.length === 0 ? undefined : parts.join(', ');
}

/** The header that told the reset, as a person would look it up in the response. */
export function resetField(view: RateLimitView): string {
  return QUOTA_FIELDS[view.dialect === 'none' ? 'seed' : view.dialect].reset;
}
