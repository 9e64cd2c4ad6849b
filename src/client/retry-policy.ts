import type { IncomingHttpHeaders } from 'node:http';
import { DEFAULTS } from '../api/defaults.ts';
import type { Operation } from '../api/operations.ts';
import { quotaState, type RateLimitView, resetField } from '../api/rate-limit-dialect.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import { fullJitterMs, type RetryBudget } from './backoff.ts';
import type { CallInput, ClientOptions } from './client-types.ts';
import type { Pacer } from './pacer.ts';

/**
 * When a call tries again, and how long a 429 holds its key: the client's rules for 429s, 5xx and
 * transport errors, apart from the lane that applies them.
 */

/** An attempt's outcome for the call: when to try again (none: return the answer), and the 429's pause. */
export type NextStep = { retryAt?: number; pauseUntil?: number };

const NO_RETRY: NextStep = Object.freeze({});

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** A 5xx or transport error of an idempotent method is tried again, with full-jitter backoff, within the retry budget. */
export function retryAfterError(
  o: ClientOptions,
  budget: RetryBudget,
  op: Operation,
  input: CallInput,
  attempt: number,
  status: number,
  receivedAt: number,
): NextStep {
  if (
    (input.retry ?? true) &&
    (status >= 500 || status === 0) &&
    IDEMPOTENT.has(op.method) &&
    attempt < (o.maxAttempts ?? DEFAULTS.maxAttempts) &&
    budget.tryRetry()
  )
    return {
      retryAt:
        receivedAt +
        fullJitterMs(
          attempt,
          o.backoffBaseMs ?? DEFAULTS.backoffBaseMs,
          o.backoffCapMs ?? DEFAULTS.backoffCapMs,
        ),
    };
  return NO_RETRY;
}

/**
 * After a 429's pause the call tries again, within its retries and the run: a pause past the run's
 * close is not waited for, and the flow gets the 429 as it is.
 */
export function retryAfter429(
  o: ClientOptions,
  input: CallInput,
  rateLimited: number,
  pauseUntil: number,
  closesAt: number,
): NextStep {
  const again =
    (input.retry ?? true) && rateLimited <= (o.maxRateLimitRetries ?? 5) && pauseUntil <= closesAt;
  return again ? { retryAt: pauseUntil, pauseUntil } : { pauseUntil };
}

/**
 * How long a 429 pauses the key: Retry-After if valid (never shortened), else until the reset its
 * rate-limit fields announce (in any dialect), else exponential backoff with full jitter; and which
 * of them said so, as the server wrote it. A small margin covers the server's clock granularity
 * (its headers are whole seconds).
 */
export function rateLimitDelay(
  o: ClientOptions,
  pacer: Pacer,
  seq: number,
  headers: IncomingHttpHeaders | undefined,
  view: RateLimitView | undefined,
  at: number,
): { ms: number; by: string } {
  const margin = 5;
  const retryAfter = parseRetryAfter(headers?.['retry-after']);
  const reset = view ? quotaState(view, at).reset : undefined;
  const toldReset = view !== undefined && reset !== undefined && reset * 1000 > at;
  // The key's 429s in a row, not this call's: a headerless limiter met by many calls sees the
  // backoff grow, where each call restarting at the base would hit it again and again.
  // A 429 whose own answer shows requests left was not the window's: another limit refused it.
  const quotaLeft = view !== undefined && view.remaining !== undefined && view.remaining > 0;
  const retries = pacer.rateLimited(seq, retryAfter !== undefined || toldReset, at, quotaLeft);
  if (retryAfter)
    return {
      ms: retryAfterDelayMs(retryAfter, at) + margin,
      by: `Retry-After ${retryAfter.form === 'seconds' ? `${retryAfter.seconds} s` : String(headers?.['retry-after']).trim()}`,
    };
  if (toldReset) {
    const told = view.dialect.startsWith('ietf')
      ? `${view.resetSeconds} s`
      : String(headers?.['x-ratelimit-reset']).trim();
    return { ms: reset * 1000 - at + margin, by: `${resetField(view)} ${told}` };
  }
  return {
    ms: fullJitterMs(retries, o.rateLimitBackoffBaseMs ?? 1000, o.rateLimitBackoffCapMs ?? 60_000) + margin,
    by: `backoff after ${retries} 429${retries === 1 ? '' : 's'}`,
  };
}
