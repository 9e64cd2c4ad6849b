import type { Operation } from '../../api/operations.ts';
import type { RateWindow } from '../../api/plans.ts';
import type { RateLimitState } from '../../api/rate-limit-headers.ts';
import type { AttemptRecord } from '../attempt.ts';

/** What a check sees of one response. Built once per response and shared by every check. */
export interface CheckContext {
  attempt: AttemptRecord;
  op: Operation;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  rateLimit: RateLimitState;
  /** The plan's windows as the target counts them (time-scaled). */
  windows: RateWindow[];
  /** Response time as Unix seconds. */
  nowSeconds: number;
}

/**
 * A check is a pure function with a stable id (thresholds, JUnit and compare refer to it), a one-line
 * rule and where the rule comes from. It returns undefined when the response passes, a short
 * reason when it fails, or SKIP when the rule does not apply to this response.
 */
export interface Check {
  id: string;
  rule: string;
  source: string;
  evaluate(ctx: CheckContext): string | undefined | typeof SKIP;
}

export const SKIP = Symbol('skip');
