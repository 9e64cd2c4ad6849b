import type { IncomingHttpHeaders } from 'node:http';
import { DEFAULTS } from '../api/defaults.ts';
import type { Operation } from '../api/operations.ts';
import { quotaState, type RateLimitView, resetField } from '../api/rate-limit-dialect.ts';
import {
  fullJitterMs,
  RESPONSE_RULES,
  type ResponseKind,
  retriesAfterError,
  waitAfterRefusal,
} from '../api/responses.ts';
import { parseRetryAfter } from '../api/retry-after.ts';
import type { RetryBudget } from './backoff.ts';
import type { CallInput, ClientOptions } from './client-types.ts';
import type { Pacer } from './pacer.ts';

/**
 * When a call tries again, and how long a refusal holds its key: src/api/responses.ts decides what
 * an answer is and how long to wait; here the client's options and its key's state are applied.
 */

/** An attempt's outcome for the call: when to try again (none: return the answer), and a refusal's pause. */
export type NextStep = { retryAt?: number; pauseUntil?: number };

const NO_RETRY: NextStep = Object.freeze({});

/** A 5xx or transport error of an idempotent method is tried again, with full-jitter backoff, within the retry budget. */
export function retryAfterError(
  o: ClientOptions,
  budget: RetryBudget,
  op: Operation,
  input: CallInput,
  attempt: number,
  kind: ResponseKind,
  receivedAt: number,
  preparing = false,
): NextStep {
  if (
    (input.retry ?? true) &&
    retriesAfterError(kind, op.method, preparing) &&
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
 * After a refusal's pause the call tries again, within its retries and the run: a pause past the
 * run's close is not waited for, and the flow gets the refusal as it is.
 */
export function retryAfterRefusal(
  o: ClientOptions,
  input: CallInput,
  refused: number,
  pauseUntil: number,
  closesAt: number,
): NextStep {
  const again =
    (input.retry ?? true) &&
    refused <= (o.maxRateLimitRetries ?? RESPONSE_RULES.maxRefusalRetries) &&
    pauseUntil <= closesAt;
  return again ? { retryAt: pauseUntil, pauseUntil } : { pauseUntil };
}

/**
 * How long a refusal pauses the key (see waitAfterRefusal), counting it in the key's refusals in a
 * row first: a headerless limiter met by many calls sees the backoff grow, where each call
 * restarting at the base would hit it again and again.
 */
export function refusalDelay(
  o: ClientOptions,
  pacer: Pacer,
  seq: number,
  headers: IncomingHttpHeaders | undefined,
  view: RateLimitView | undefined,
  at: number,
): { ms: number; by: string } {
  const reset = view ? quotaState(view, at).reset : undefined;
  const toldReset = view !== undefined && reset !== undefined && reset * 1000 > at;
  const retryAfter = headers?.['retry-after'];
  // A refusal whose own answer shows requests left was not the window's: another limit refused it.
  const quotaLeft = view !== undefined && view.remaining !== undefined && view.remaining > 0;
  const told = toldReset || parseRetryAfter(retryAfter) !== undefined;
  const inRow = pacer.rateLimited(seq, told, at, quotaLeft);
  const resetBy = toldReset
    ? `${resetField(view)} ${view.dialect.startsWith('ietf') ? `${view.resetSeconds} s` : String(headers?.['x-ratelimit-reset']).trim()}`
    : undefined;
  return waitAfterRefusal(
    { retryAfter, ...(toldReset ? { resetAt: reset * 1000, resetBy } : {}) },
    at,
    inRow,
    {
      baseMs: o.rateLimitBackoffBaseMs ?? RESPONSE_RULES.refusalBackoffBaseMs,
      capMs: o.rateLimitBackoffCapMs ?? RESPONSE_RULES.refusalBackoffCapMs,
    },
  );
}
