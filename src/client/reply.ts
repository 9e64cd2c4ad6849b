import type { IncomingHttpHeaders } from 'node:http';
import type { ApiResponse } from './client-types.ts';
import type { ResponseBody } from './response-body.ts';

/**
 * What a call returns. A class, with the body behind a getter, because the body is parsed only if the
 * flow reads it (see ResponseBody) and an object literal with a getter costs V8 a runtime call on
 * every response.
 */
export class Reply<T> implements ApiResponse<T> {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: IncomingHttpHeaders;
  readonly attempts: number;
  // Declared, not initialised: a call without a transport error has no `error` key at all.
  declare readonly error?: string;
  readonly #payload: ResponseBody;

  constructor(
    status: number,
    headers: IncomingHttpHeaders,
    payload: ResponseBody,
    attempts: number,
    error: string | undefined,
  ) {
    this.status = status;
    this.headers = headers;
    this.attempts = attempts;
    this.ok = status >= 200 && status < 300;
    this.#payload = payload;
    if (error !== undefined) (this as { error?: string }).error = error;
  }

  /** The JSON body, or the text when the body is not JSON. */
  get body(): T {
    return (this.#payload.json ?? this.#payload.text) as T;
  }

  /** Logged or serialised, a response shows its body like its other fields. */
  toJSON(): ApiResponse<T> {
    const { status, ok, headers, body, attempts, error } = this;
    return { status, ok, headers, body, attempts, ...(error === undefined ? {} : { error }) };
  }
}
