import type { Operation } from '../../api/operations.ts';
import type { RateWindow } from '../../api/plans.ts';
import { type RateLimitView, readRateLimit } from '../../api/rate-limit-dialect.ts';
import type { AttemptRecord } from '../attempt.ts';
import { type Quota, quotaOf } from './quota.ts';

type Headers = Record<string, string | string[] | undefined>;

/** What a check sees of one response. Built once per response and shared by every check. */
export interface CheckContext {
  attempt: AttemptRecord;
  op: Operation;
  status: number;
  headers: Headers;
  /** The quota fields in whatever dialect the server spoke. */
  rateLimitView: RateLimitView;
  /** The same quota as the checks compare it: Reset as a Unix time, with how far it may be off. */
  quota: Quota;
  /** The plan's windows as the target counts them (time-scaled). */
  windows: readonly RateWindow[];
  /** Response time as Unix seconds. */
  nowSeconds: number;
}

/**
 * The context of one response. The client has read the quota already (for pacing): its view is
 * taken as it is, and the headers are read here only for a record without one (a test's).
 */
export function checkContext(
  attempt: AttemptRecord,
  headers: Headers,
  windows: readonly RateWindow[],
): CheckContext {
  const view = attempt.rateLimitView ?? readRateLimit(headers, attempt.receivedAt);
  return {
    attempt,
    op: attempt.operation,
    status: attempt.status,
    headers,
    rateLimitView: view,
    quota: quotaOf(view, attempt),
    windows,
    nowSeconds: attempt.receivedAt / 1000,
  };
}

/**
 * undefined: the response passes; a string: it fails, and why; SKIP: the rule does not apply to it;
 * NOT_DECLARED: the rule is the document's, and the document promises nothing of it for this
 * response's status (counted apart, so that a result shows how much went unjudged and why).
 */
export type CheckOutcome = string | undefined | typeof SKIP | typeof NOT_DECLARED;

/** Verdicts that need every request sent before a response to be answered wait this long (ms). */
export const DEFAULT_SETTLE_AFTER_MS = 15_000;

/** A verdict on an earlier response that could not be judged when it arrived. */
export interface SettledOutcome {
  attempt: AttemptRecord;
  /** undefined: passed; a string: failed, and why. */
  outcome: string | undefined;
}

/**
 * A check has a stable id (thresholds, JUnit and compare refer to it), a one-line rule and where the
 * rule comes from. `evaluate` returns undefined when the response passes, a short reason when it
 * fails, or SKIP when the rule does not apply to this response.
 *
 * Most checks are pure functions of one response. A check that compares responses (a window's
 * Remaining never rising, a 429 only when the quota is spent) is made by a factory, one instance per
 * run, and keeps its own state: it may see every attempt, transport errors included (`observe`,
 * called before any check evaluates that attempt), and it may defer a verdict until the requests
 * that could change it have all been answered (`evaluate` returns SKIP, `settle` gives the verdict
 * later). Responses reach the checks in the order they were received.
 */
export interface Check {
  id: string;
  rule: string;
  source: string;
  evaluate(ctx: CheckContext): CheckOutcome;
  observe?(attempt: AttemptRecord): void;
  /**
   * Verdicts that can be given now, `nowMs` being the receive time of the latest attempt; with
   * `final`, every verdict still open (no request of the run is in flight any more).
   */
  settle?(nowMs: number, final: boolean): SettledOutcome[];
}

/** One failure kept as an example, to show what went wrong without storing every one. */
export interface CheckSample {
  operation: string;
  status: number;
  detail: string;
  /** Epoch ms of the response. */
  at: number;
}

/** What an attempt check reports: its counts so far. */
export interface AttemptCheckCounts {
  passes: number;
  failures: number;
  samples: CheckSample[];
}

/**
 * A check of OUR client's behaviour (waits, backoff, retry budget), judged from the sequence of
 * attempts rather than from one response. It sees every attempt in the order received and keeps
 * its own counts, because some verdicts are about the run as a whole (the retry budget).
 */
export interface AttemptCheck {
  id: string;
  rule: string;
  source: string;
  observe(attempt: AttemptRecord): void;
  counts(): AttemptCheckCounts;
}

export const SKIP = Symbol('skip');
export const NOT_DECLARED = Symbol('not declared');
