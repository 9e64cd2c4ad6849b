// What a scenario's flow sends and gets back: the shapes a scenario author sees in `petstore-load`'s
// types (src/index.ts). They import nothing, so that the declarations users read stop here.

/** What a request carries: path parameters, query, body. Built into a request by src/api/request.ts. */
export interface RequestInput {
  /** Path parameters by name: `{ petId: 3 }` for `/pets/{petId}`. */
  path?: Record<string, string | number>;
  /** Query parameters; `undefined` values are left out. */
  query?: { [name: string]: string | number | boolean | undefined } | object;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is instead of `JSON.stringify(body)` (invalid JSON on purpose); `body` is then ignored. */
  rawBody?: string;
  /** The Content-Type of a body (default `application/json`). */
  contentType?: string;
  /**
   * Request headers of this call, over the defaults (Accept: the media types the operation's
   * responses declare; Content-Type). The key's own header is not replaced: to send other
   * credentials, give `auth: 'none'` with them, or `auth: { key }` for another key.
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Deliberately bad requests (a compliance battery): `'none'` sends no key, `{ key }` sends that
   * key instead of the run's. Like the run's key, it is never recorded: the attempt's key label says
   * `free (no key)` or `free (another key)`, and pacing ignores their headers.
   */
  auth?: 'none' | { key: string };
}

/** A call of `api.call(operationId, input)`: what its request carries, and how the client treats it. */
export interface CallInput extends RequestInput {
  /** Open model: when the iteration was due (set by the engine), for coordinated-omission-corrected response time. */
  scheduledAt?: number;
  /**
   * False: the first answer is returned as it is, a 429, a 5xx or a transport error included (no
   * retry). A 429 still pauses the key until its Retry-After: the ban guard holds either way.
   */
  retry?: boolean;
}

/** Response headers by lower-case name, as Node's `http` module gives them (`set-cookie` a list). */
export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * A response as a flow gets it: returned, never thrown (a flow decides what a 404 means to it; the
 * recorder has counted it either way). Read-only; the body is parsed when first read.
 *
 * @example
 * const res = await api.getPetById(7);
 * if (res.status === 200) console.log(res.body.name);
 */
export interface ApiResponse<T = unknown> {
  /** The HTTP status, or 0 when no response came (see `error`). */
  readonly status: number;
  /** A 2xx status. */
  readonly ok: boolean;
  readonly headers: ResponseHeaders;
  /** The JSON body, parsed (undefined when empty or not JSON). */
  readonly body: T;
  /** A transport error's code when `status` is 0 (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`). */
  readonly error?: string;
  /** Requests sent for this call, retries included. */
  readonly attempts: number;
}
