/** `petstore-load capacity`: what each plan's key was measured to get, against what the plan promises. */

export type LimiterType = 'fixed-window' | 'sliding-window' | 'token-bucket' | 'unknown';

/** X-RateLimit-* as one response of the exhaustion phase carried them. */
export interface CapacityHeaderSample {
  /** 1-based request number within the exhaustion phase. */
  request: number;
  status: number;
  limit: number | null;
  remaining: number | null;
  /** Unix seconds. */
  reset: number | null;
}

export interface CapacityReport {
  plan: string;
  /** The target's time scale for this plan: its windows are the plan's divided by it. */
  timeScale: number;
  /** The plan's shortest window as the target counts it (time-scaled). */
  window: { name: string; limit: number; seconds: number };
  /** The plan's unscaled promise per minute and per day (null when it has no such window). */
  promisedPerMinute: number | null;
  promisedPerDay: number | null;
  /** Phase 1: the plan rate, window by window. */
  rate: {
    windows: number;
    sent: number;
    /** Requests admitted in each window (L sent per window, evenly spaced). */
    acceptedPerWindow: number[];
    rateLimited: number;
    /** The smallest of acceptedPerWindow: the capacity the plan reliably gets (threshold `accepted_per_minute`). */
    acceptedPerMinute: number | null;
    /** Distinct X-RateLimit-Reset values seen within each window. */
    resetValuesPerWindow: number[];
  };
  /** Phase 2: one fresh window exhausted until the first 429 (never more than limit + 3 requests). */
  exhaust: {
    sent: number;
    accepted: number;
    /** Admitted requests of the window + 1: where the first 429 came; null when none came within the bound. */
    first429At: number | null;
    expected429At: number;
    /** The first three and the last five responses' headers. */
    headers: CapacityHeaderSample[];
    /** Retry-After of the first 429 in seconds (an HTTP-date converted), null when absent. */
    retryAfterSeconds: number | null;
    /** X-RateLimit-Reset of the first 429 (Unix seconds), null when absent. */
    reset: number | null;
  };
  /** Phase 3: the quota's return, probed only once Retry-After had elapsed. */
  recovery: {
    probes: number;
    /** Epoch ms that Retry-After announced (time of the 429 + its delay). */
    announcedRetryAt: number | null;
    /** Epoch ms that X-RateLimit-Reset announced. */
    announcedResetAt: number | null;
    /** Epoch ms of the first admitted probe: the quota was back by then. */
    quotaBackAt: number | null;
    /** quotaBackAt - announcedResetAt: positive is late (a client trusting the header gets a 429). */
    resetErrorMs: number | null;
    /** |resetErrorMs| (threshold `reset_accuracy_ms`). */
    resetAccuracyMs: number | null;
    /** quotaBackAt - announcedRetryAt, never negative (threshold `retry_after_accuracy_ms`). */
    retryAfterAccuracyMs: number | null;
    /** X-RateLimit-Remaining of the first admitted probe, and of one more a tenth of a window later. */
    remainingAtReturn: number | null;
    remainingAfterTenth: number | null;
  };
  limiter: { type: LimiterType; evidence: string[] };
  /** Requests sent before a Retry-After had elapsed (must be 0), and whether the key was ever banned (403 or a 429 with a long delay). */
  violations: number;
  verdict: 'pass' | 'fail';
  reasons: string[];
  durationMs: number;
}
