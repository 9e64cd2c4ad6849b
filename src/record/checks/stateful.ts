import type { LimiterKind } from '../../api/limiter-kinds.ts';
import { AttemptHistory } from './attempt-history.ts';
import { type Check, DEFAULT_SETTLE_AFTER_MS } from './check.ts';
import { only429WhenSpentCheck } from './only-429-when-spent.ts';
import { RemainingLog } from './remaining-log.ts';
import { retrySucceedsCheck } from './retry-succeeds.ts';
import { describesClosestCheck, remainingNeverRisesCheck, resetStableCheck } from './window-checks.ts';

/*
 * Checks that compare responses with each other. Responses arrive out of order (8 virtual users
 * have 8 requests in flight), so two responses are compared only when their order at the server is
 * certain: A was processed before B if A was received before B was sent. Everything is judged from
 * the server's own numbers (its quota fields in whatever dialect, Retry-After) and the client's send
 * and receive times; nothing assumes the server's algorithm. A window is identified by its Limit and
 * Reset, and a response B is "in A's window" only when B was answered at least one second before
 * A's Reset (the header is whole seconds rounded up, so the true reset may be up to a second
 * earlier), and by A's slack more when A's Reset was a delay (quota.ts).
 */

/** The response checks that keep state, fresh for one run, in report order. */
export function statefulChecks(settleAfterMs = DEFAULT_SETTLE_AFTER_MS, limiter?: LimiterKind): Check[] {
  // Checks that keep the same per-key record share one: memory per key is what a run of 10,000
  // tenants multiplies (the log gets the same steps from both, the history the same attempts).
  const log = new RemainingLog(settleAfterMs);
  const history = new AttemptHistory();
  return [
    remainingNeverRisesCheck(settleAfterMs, limiter, log),
    resetStableCheck(),
    describesClosestCheck(settleAfterMs, log),
    only429WhenSpentCheck(settleAfterMs, history),
    retrySucceedsCheck(settleAfterMs, history),
  ];
}
