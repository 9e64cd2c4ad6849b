/** The seed's Error object: every error response of the service carries one. */
export interface ErrorObject {
  code: string;
  message: string;
  status: number;
}

/** Codes the reference server sends (listed in the document's `x-error-codes`). */
export type ErrorCode =
  | 'bad_request'
  | 'unsupported_media_type'
  | 'unknown_category'
  | 'unknown_pet'
  | 'unauthorized'
  | 'not_found'
  | 'insufficient_stock'
  | 'order_complete'
  | 'gone'
  | 'payload_too_large'
  | 'rate_limited'
  | 'temporarily_banned'
  | 'internal_error';

export function isErrorObject(value: unknown): value is ErrorObject {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.message === 'string' && Number.isInteger(v.status);
}
