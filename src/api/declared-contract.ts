import { type Dialect, readRateLimit } from './rate-limit-dialect.ts';

/**
 * What an OpenAPI document promises of a response's rate-limit headers, read from the names of the
 * headers it declares per status: the contract the checks judge a user's own target by (`--spec`),
 * in place of the seed's X-RateLimit-* on every response.
 */

/** The rate-limit fields a response declares, and the dialects those fields can be. */
export interface DeclaredRateLimit {
  /**
   * The dialects that keep the promise, never empty. More than one where the names alone do not tell
   * them apart and no example does: `RateLimit` is draft 7's dictionary or draft 8's list,
   * `X-RateLimit-*` has Reset a Unix time, a delay or milliseconds.
   */
  dialects: readonly Dialect[];
  /** The declared rate-limit field names, lower case, in the document's order. */
  fields: readonly string[];
}

/** One declared response (a status, a `4XX` range or `default`) as the checks read it. */
export interface DeclaredResponse {
  /** The status key as the document writes it: "200", "4XX" or "default". */
  status: string;
  /** Every header it declares, lower case. */
  headers: readonly string[];
  /** Its rate-limit fields; undefined when it declares none ("not declared"). */
  rateLimit: DeclaredRateLimit | undefined;
  /** It declares Retry-After. */
  retryAfter: boolean;
}

/** An operation's declared responses, by status key as the document writes it ("200", "4XX", "default"). */
export interface DeclaredContract {
  byStatus: ReadonlyMap<string, DeclaredResponse>;
}

const LEGACY_FIELDS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const IETF6_FIELDS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/** Each field's dialects, most specific first. RateLimit-Policy is sent by every IETF draft. */
const FIELD_DIALECTS: Readonly<Record<string, readonly Dialect[]>> = {
  'x-ratelimit-limit': ['seed', 'seconds-until', 'unix-ms'],
  'x-ratelimit-remaining': ['seed', 'seconds-until', 'unix-ms'],
  'x-ratelimit-reset': ['seed', 'seconds-until', 'unix-ms'],
  ratelimit: ['ietf-8', 'ietf-7'],
  'ratelimit-limit': ['ietf-6'],
  'ratelimit-remaining': ['ietf-6'],
  'ratelimit-reset': ['ietf-6'],
  'ratelimit-policy': ['ietf-8', 'ietf-7', 'ietf-6'],
};

/** The fields as a person looks them up in a response or a document. */
const SPELLING: Readonly<Record<string, string>> = {
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
  ratelimit: 'RateLimit',
  'ratelimit-limit': 'RateLimit-Limit',
  'ratelimit-remaining': 'RateLimit-Remaining',
  'ratelimit-reset': 'RateLimit-Reset',
  'ratelimit-policy': 'RateLimit-Policy',
};

export const isRateLimitField = (name: string): boolean => FIELD_DIALECTS[name] !== undefined;

/** A rate-limit field as the drafts and the seed spell it. */
export const fieldSpelling = (name: string): string => SPELLING[name] ?? name;

type HeaderObject = {
  example?: unknown;
  examples?: Record<string, { value?: unknown } | undefined>;
  schema?: { example?: unknown; examples?: unknown };
};

/** A header object's example values, as text: its own `example(s)` and its schema's (3.1: a list). */
function examplesOf(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const header = value as HeaderObject;
  const values: unknown[] = [header.example, header.schema?.example];
  for (const e of Object.values(header.examples ?? {})) values.push(e?.value);
  if (Array.isArray(header.schema?.examples)) values.push(...header.schema.examples);
  return values.filter((v) => typeof v === 'string' || typeof v === 'number').map((v) => String(v));
}

/**
 * The dialects `candidates` narrowed to those the fields' examples are written in (an example of
 * `RateLimit` as `limit=10, remaining=0, reset=10` is draft 7; an X-RateLimit-Reset of 1767225660 a
 * Unix time). Without an example, or with none any candidate reads, the names alone decide.
 */
function narrowByExamples(
  candidates: readonly Dialect[],
  declared: Readonly<Record<string, unknown>>,
  names: readonly string[],
): readonly Dialect[] {
  const seen = new Set<Dialect>();
  // A fixed moment: an example's Reset is told apart by magnitude, not by the time it is read at.
  const at = Date.UTC(2026, 0, 1);
  for (const name of names) {
    for (const example of examplesOf(declared[name])) {
      const dialect = readRateLimit({ [name]: example }, at).dialect;
      if (dialect !== 'none') seen.add(dialect);
    }
  }
  const narrowed = candidates.filter((d) => seen.has(d));
  return narrowed.length > 0 ? narrowed : candidates;
}

/** The rate-limit promise of one response's declared headers (names lower case), or undefined. */
export function declaredRateLimit(
  declared: Readonly<Record<string, unknown>>,
): DeclaredRateLimit | undefined {
  const fields = Object.keys(declared).filter(isRateLimitField);
  if (fields.length === 0) return undefined;
  const families: (readonly Dialect[])[] = [];
  const has = (list: readonly string[]) => list.some((f) => fields.includes(f));
  if (has(LEGACY_FIELDS))
    families.push(
      narrowByExamples(FIELD_DIALECTS['x-ratelimit-reset'] ?? [], declared, ['x-ratelimit-reset']),
    );
  if (fields.includes('ratelimit'))
    families.push(narrowByExamples(FIELD_DIALECTS.ratelimit ?? [], declared, ['ratelimit']));
  if (has(IETF6_FIELDS)) families.push(['ietf-6']);
  // RateLimit-Policy alone: some IETF draft, which one its companions would have said.
  if (families.length === 0) families.push(FIELD_DIALECTS['ratelimit-policy'] ?? []);
  return { dialects: [...new Set(families.flat())], fields };
}

/** A response object's headers by lower-case name (dereferenced: header objects, not `$ref`s). */
function headersOf(response: unknown): Record<string, unknown> {
  const headers = (response as { headers?: Record<string, unknown> } | undefined)?.headers ?? {};
  return Object.fromEntries(Object.entries(headers).map(([name, h]) => [name.toLowerCase(), h]));
}

/** An operation's declared contract, from its dereferenced `responses` object. Computed once, at load. */
export function declaredContract(responses: Record<string, unknown> | undefined): DeclaredContract {
  const byStatus = new Map<string, DeclaredResponse>();
  for (const [status, response] of Object.entries(responses ?? {})) {
    const declared = headersOf(response);
    const headers = Object.keys(declared);
    byStatus.set(status, {
      status,
      headers,
      rateLimit: declaredRateLimit(declared),
      retryAfter: headers.includes('retry-after'),
    });
  }
  return { byStatus };
}

/**
 * What the document declares for a status: the exact code, then its `4XX`-style range, then
 * `default` (as `findResponse`); undefined when it declares none of them. Runs on every response:
 * it returns the entry made at load, allocating nothing.
 */
export function declaredFor(contract: DeclaredContract, status: number): DeclaredResponse | undefined {
  const code = String(status);
  const exact = contract.byStatus.get(code);
  if (exact !== undefined) return exact;
  const range = `${code[0]}XX`;
  for (const [key, response] of contract.byStatus) if (key.toUpperCase() === range) return response;
  return contract.byStatus.get('default');
}

/** One status's contract for a person: `ietf-7 (RateLimit), Retry-After`, or `not declared`. */
export function describeDeclared(response: DeclaredResponse): string {
  const quota = response.rateLimit
    ? `${response.rateLimit.dialects.join(' or ')} (${response.rateLimit.fields.map(fieldSpelling).join(', ')})`
    : undefined;
  if (quota === undefined) return response.retryAfter ? 'no rate-limit fields, Retry-After' : 'not declared';
  return response.retryAfter ? `${quota}, Retry-After` : quota;
}
