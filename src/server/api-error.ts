import type { ErrorCode, ErrorObject } from '../api/error-object.ts';

/** Thrown by the store and the hooks; the error handler turns it into the seed's Error object. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;

  constructor(status: number, code: ErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }

  toBody(): ErrorObject {
    return { code: this.code, message: this.message, status: this.status };
  }
}

export const notFound = (what: string, id: number) =>
  new ApiError(404, 'not_found', `${what} ${id} not found`);
