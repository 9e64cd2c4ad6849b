import { parseHttpDate } from './http-date.ts';
import type { HeaderValue } from './rate-limit-headers.ts';

export type RetryAfter = { form: 'seconds'; seconds: number } | { form: 'date'; date: Date };

/**
 * RFC 9110 section 10.2.3: `Retry-After: 120` (delay-seconds) or `Retry-After: <HTTP-date>`;
 * undefined for anything else (the client then backs off with jitter instead).
 *
 * @example
 * const res = await api.listPets();
 * if (res.status === 429) console.log(parseRetryAfter(res.headers['retry-after'])); // { form: 'seconds', seconds: 12 }
 */
export function parseRetryAfter(value: HeaderValue): RetryAfter | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d{1,15}$/.test(text)) return { form: 'seconds', seconds: Number(text) };
  const date = parseHttpDate(text);
  return date ? { form: 'date', date } : undefined;
}

/** How long to wait from `nowMs`. Never negative; a date in the past means "now". */
export function retryAfterDelayMs(retryAfter: RetryAfter, nowMs: number): number {
  if (retryAfter.form === 'seconds') return retryAfter.seconds * 1000;
  return Math.max(0, retryAfter.date.getTime() - nowMs);
}
