import { type AuthPlacement, samePlacement } from './auth.ts';
import type { RequestInput } from './call-types.ts';
import type { HttpMethod, Operation } from './operations.ts';

/**
 * The one place a request is built from an operation: its target (base path, path values, query and,
 * where the operation's scheme puts it there, the key), its headers (the key where the scheme says,
 * the media types the operation's responses declare asked for, the body's type, the call's own) and
 * its body. The plan-aware client, capacity's probes and the
 * benchmark's cycle all build here, so that the three cannot drift apart on where a key goes.
 */

const JSON_TYPE = 'application/json';

/** What a request carries beyond its operation: the client's `CallInput` without its scheduling. */
/** A request as undici's `Pool.dispatch` takes it (and, timeouts aside, as autocannon does). */
export interface BuiltRequest {
  path: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  headersTimeout: number;
  bodyTimeout: number;
}

/** A path template split once into literal text and parameter names: `/pets/{petId}` -> ['/pets/', 'petId', '']. */
export type PathTemplate = readonly string[];

export function compilePath(path: string): PathTemplate {
  return path.split(/\{([^}]+)\}/);
}

/** `/pets/{petId}` with `{ petId: 3 }` and a query: path and query string, values encoded. */
export function requestPath(
  op: Operation,
  values: Readonly<Record<string, string | number>> = {},
  query?: RequestInput['query'],
  template: PathTemplate = compilePath(op.path),
): string {
  let out = template[0] as string;
  for (let i = 1; i < template.length; i += 2) {
    const name = template[i] as string;
    const value = values[name];
    if (value === undefined) throw new Error(`${op.id}: path parameter '${name}' is missing`);
    out += encodeURIComponent(String(value)) + (template[i + 1] as string);
  }
  return query ? out + queryString(query) : out;
}

function queryString(query: NonNullable<RequestInput['query']>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.append(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The headers that carry a key placed in a header; none for the query. */
export function authHeaders(placement: AuthPlacement, key: string): Record<string, string> {
  if (placement.in === 'query') return {};
  return { [placement.name]: placement.bearer ? `Bearer ${key}` : key };
}

/** `name=key` (encoded) for a key placed in the query, to join to a URL; empty for a header. */
export function authQuery(placement: AuthPlacement, key: string): string {
  if (placement.in !== 'query') return '';
  return `${encodeURIComponent(placement.name)}=${encodeURIComponent(key)}`;
}

/** A path with the key's query parameter added (for a query placement); the path as-is otherwise. */
export function withAuthQuery(path: string, placement: AuthPlacement, key: string | undefined): string {
  const q = key === undefined ? '' : authQuery(placement, key);
  if (!q) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${q}`;
}

/**
 * A request's headers: the operation's Accept (the media types its responses declare), the key where
 * `placement` says, and the body's type if any.
 */
export function requestHeaders(
  placement: AuthPlacement,
  key: string | undefined,
  contentType?: string,
  accept: string = JSON_TYPE,
): Record<string, string> {
  const headers: Record<string, string> = {
    accept,
    ...(key === undefined ? {} : authHeaders(placement, key)),
  };
  if (contentType !== undefined) headers['content-type'] = contentType;
  return headers;
}

/**
 * A call's own headers (`input.headers`) over the request's: names in lower case, so that `Accept`
 * replaces our `accept` rather than going out beside it. They override anything of ours (Accept,
 * Content-Type) except the header that carries the key: a call sending the run's key (or `auth: {
 * key }`) sends it as the operation's scheme says, whatever its headers say, so that a stray
 * `authorization` in a flow cannot send a request under another identity than the one its record and
 * its pacing name. A call that means to send its own credentials says so with `auth: 'none'`: no key
 * of ours goes, and its headers go as given (recorded as `no key`, its quota fields not paced by).
 */
export function withCallHeaders(
  headers: Record<string, string>,
  own: Readonly<Record<string, string>>,
  placement: AuthPlacement,
  keySent: boolean,
): Record<string, string> {
  const out = { ...headers };
  const keyHeader = keySent && placement.in !== 'query' ? placement.name.toLowerCase() : undefined;
  for (const [name, value] of Object.entries(own)) {
    const lower = name.toLowerCase();
    if (lower === keyHeader) continue;
    // The key's header as the placement spells it (`Authorization`) is replaced too, not duplicated.
    for (const ours of Object.keys(out)) if (ours.toLowerCase() === lower) delete out[ours];
    out[lower] = value;
  }
  return out;
}

/** A request's body: the raw text when given, else the JSON of `body`, else none. */
export function requestBody(input: RequestInput): string | undefined {
  if (input.rawBody !== undefined) return input.rawBody;
  return input.body === undefined ? undefined : JSON.stringify(input.body);
}

type HeaderPair = { plain: Record<string, string>; json?: Record<string, string> };

/**
 * One key's requests. Its headers are made once per placement and Accept, without and with a JSON
 * body, and the same objects are sent on every request: those of the first operation called (most
 * documents have one placement and one Accept for all), others by operation only if the document has
 * them. A tenant mix has thousands of keys, and each costs its headers.
 */
export class KeyRequests {
  private first: (HeaderPair & { auth: AuthPlacement; accept: string }) | undefined;
  private others: Map<Operation, HeaderPair> | undefined;
  readonly key: string | undefined;

  /** `key`: undefined sends none (a target that asks for none). */
  constructor(key: string | undefined) {
    this.key = key;
  }

  /**
   * A call's request, the same on every attempt. The key in the query (where the document puts it
   * there) goes on the request only: records and messages name the operation, never this path.
   */
  build(
    basePath: string,
    op: Operation,
    input: RequestInput,
    timeoutMs: number,
    template?: PathTemplate,
  ): BuiltRequest {
    const auth = input.auth;
    const key = auth === undefined ? this.key : auth === 'none' ? undefined : auth.key;
    const body = requestBody(input);
    const headers =
      auth === undefined && input.contentType === undefined && input.rawBody === undefined
        ? this.headers(op, body !== undefined)
        : requestHeaders(
            op.auth,
            key,
            body !== undefined || input.contentType !== undefined
              ? (input.contentType ?? JSON_TYPE)
              : undefined,
            op.accept,
          );
    return {
      path: withAuthQuery(basePath + requestPath(op, input.path, input.query, template), op.auth, key),
      method: op.method,
      headers:
        input.headers === undefined
          ? headers
          : withCallHeaders(headers, input.headers, op.auth, key !== undefined),
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
  }

  /** An operation's headers with this key where its document puts it, and a JSON body's type if `json`. */
  headers(op: Operation, json: boolean): Record<string, string> {
    const pair = this.pairFor(op);
    if (!json) return pair.plain;
    pair.json ??= { ...pair.plain, 'content-type': JSON_TYPE };
    return pair.json;
  }

  private pairFor(op: Operation): HeaderPair {
    if (this.first === undefined) {
      this.first = {
        auth: op.auth,
        accept: op.accept,
        plain: requestHeaders(op.auth, this.key, undefined, op.accept),
      };
      return this.first;
    }
    if (samePlacement(this.first.auth, op.auth) && this.first.accept === op.accept) return this.first;
    this.others ??= new Map();
    let pair = this.others.get(op);
    if (pair === undefined) {
      pair = { plain: requestHeaders(op.auth, this.key, undefined, op.accept) };
      this.others.set(op, pair);
    }
    return pair;
  }
}
