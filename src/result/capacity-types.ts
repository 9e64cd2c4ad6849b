/** `petstore-load capacity`: what each plan's key was measured to get, against what the plan promises. */

import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { Dialect } from '../api/rate-limit-dialect.ts';

export type LimiterType = LimiterKind | 'unknown';

/**
 * What the reset a dialect announces is counted from: a Unix time in seconds (the seed), the
 * seconds until it (@fastify/rate-limit, the IETF drafts), a Unix time in ms, or no reset at all.
 */
export type ResetSemantics = 'unix-seconds' | 'seconds-until' | 'unix-ms' | 'none';

/**
 * The search for a limiter's emission interval (the gap after which one more request is admitted),
 * run against limiters that refill continuously (token bucket, GCRA) or tell nothing: each answer
 * rules out the intervals (and bursts) under which a GCRA would have answered otherwise.
 */
export interface RateSearch {
  /** Requests it sent, and how many of them were refused (each one waited out before the next). */
  probes: number;
  refused: number;
  /** The emission intervals every answer so far agrees with, ms (null: none did). */
  intervalMs: { low: number; high: number } | null;
  durationMs: number;
}

/** The limiter as measured: its model, its sustained rate, its burst and how its headers speak. */
export interface LimiterReport {
  type: LimiterType;
  evidence: string[];
  /** The rate-limit dialect most answers spoke (`none`: no rate-limit header at all). */
  headerDialect: Dialect | 'none';
  /** How that dialect's reset is counted; every reset figure of the report was read in it. */
  resetSemantics: ResetSemantics;
  /**
   * Requests per second the limiter admits for ever: a window's limit over its length, or one per
   * emission interval for a token bucket or GCRA (null: not measured).
   */
  sustainedPerSecond: number | null;
  /**
   * Requests admitted at once beyond the sustained flow: for a GCRA its burst N (admitted at once
   * after a rest: N + 1), for a token bucket its size, for a window its limit (null: not measured).
   */
  burst: number | null;
  /** The window and its limit, for window limiters (null for a token bucket, a GCRA, or unknown). */
  window: { limit: number; seconds: number } | null;
  /** The emission-interval search, when it ran (null: a window's figures needed none). */
  rateSearch: RateSearch | null;
  /**
   * Requests of the key the target admits in flight at once (nginx `limit_conn`): with type
   * `concurrency` the only limit seen, beside a rate model both (null: none seen, or not probed).
   */
  maxInFlight?: number | null;
  /** Requests a limiter held and released at its rate rather than refused (nginx `limit_req` without `nodelay`); 0 or null: none. */
  queue?: number | null;
  /**
   * A limiter that delays rather than refuses (express-slow-down): answers held longer by the same
   * step for each request past a threshold (null: none seen; absent in results written before).
   */
  slowDown?: SlowDown | null;
  /**
   * A key refused for a fixed time after its first excess, longer than the window, then back to its
   * rate: a proxy's block, the temporary ban as limiters in the wild apply it (null or absent: none seen).
   */
  block?: Block | null;
  /**
   * Every window of the plan, shortest first (`window` above is the first): each measured or not,
   * and how (absent in results written before).
   */
  windows?: LimiterWindow[];
  /**
   * The status the limiter refused with (429 as the seed says; 503 as nginx limit_req by default;
   * 403 as some APIs); the most frequent where several came. Null: no refusal; absent in results
   * written before.
   */
  refusalStatus?: number | null;
  /** The last paced phase, at the inferred model rather than the plan (null: no model to check; absent in results written before). */
  check?: ModelCheck | null;
}

/** A paced phase at the inferred model: a model that holds draws no 429. */
export interface ModelCheck {
  sent: number;
  refused: number;
  /**
   * `model`: a last phase paced at the model; `paced-windows`: the model's pace is the plan's, and
   * the plan-rate windows were that phase (absent in results written before: `model`).
   */
  phase?: 'model' | 'paced-windows';
}

/** One window of the plan, as the probe measured it (or the plan's figures, unmeasured, saying why). */
export interface LimiterWindow {
  limit: number;
  seconds: number;
  type: LimiterType;
  measured: boolean;
  evidence: string;
}

/** A block after an excess, as the probe measured it. */
export interface Block {
  /** How long the key was refused, from the excess to the quota's return. */
  seconds: number;
  /** Requests past the window's limit that started it (1: the first excess). */
  afterExcessOf: number;
  /** Whether the one request sent inside it prolonged it (null: none was sent). */
  extendedByProbes: boolean | null;
}

/** Requests answered at once from rest, and how much longer each one past them was held, ms. */
export interface SlowDown {
  threshold: number;
  delayPerRequestMs: number;
}

/** X-RateLimit-* as one response of the exhaustion phase carried them. */
export interface CapacityHeaderSample {
  /** 1-based request number within the exhaustion phase. */
  request: number;
  status: number;
  limit: number | null;
  remaining: number | null;
  /** Unix seconds, read in the dialect the answer spoke (a fraction when it told a delay). */
  reset: number | null;
}

export interface CapacityReport {
  plan: string;
  /** The operation every request of the probe was (absent in results written before `--spec`). */
  operation?: { id: string; method: string; path: string };
  /** The target's time scale for this plan: its windows are the plan's divided by it. */
  timeScale: number;
  /** The plan's shortest window as the target counts it (time-scaled). */
  window: { name: string; limit: number; seconds: number };
  /** The plan's unscaled promise per minute and per day (null when it has no such window). */
  promisedPerMinute: number | null;
  promisedPerDay: number | null;
  /**
   * The plan rate, window by window: L requests evenly over 90% of each window, or, against a token
   * bucket or a GCRA (whose rule binds between two sends), L at the plan's spacing plus 10%, each
   * that long after the one before was written.
   */
  rate: {
    windows: number;
    sent: number;
    /** Requests admitted in each window (L sent per window, evenly spaced). */
    acceptedPerWindow: number[];
    rateLimited: number;
    /** The smallest of acceptedPerWindow: the capacity the plan reliably gets (threshold `accepted_per_minute`). */
    acceptedPerMinute: number | null;
    /**
     * Distinct resets the admitted answers announced within each window, to the headers' precision:
     * instants closer than a second (plus slack) to the first of a group count as one, so that a
     * reset told as seconds-until, which reads a little differently on every answer, counts once.
     */
    resetValuesPerWindow: number[];
  };
  /**
   * One fresh window (or a limiter at rest) exhausted until the first 429, never more than limit + 3
   * requests: where the first 429 came is the burst the limiter admits at once.
   */
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
    /** The reset the first 429 announced, in its dialect, as Unix seconds; null when absent. */
    reset: number | null;
  };
  /** The quota's return, probed only once Retry-After (else the announced reset, else our own backoff) had elapsed. */
  recovery: {
    probes: number;
    /** Epoch ms that Retry-After announced (time of the 429 + its delay). */
    announcedRetryAt: number | null;
    /** Epoch ms of the reset the 429 announced, read in its dialect (seconds-until, Unix s or ms, IETF). */
    announcedResetAt: number | null;
    /** Epoch ms of the first admitted probe: the quota was back by then. */
    quotaBackAt: number | null;
    /**
     * quotaBackAt - announcedResetAt: positive is late (a client trusting the header gets a 429).
     * Null for a token bucket or a GCRA: their reset announces a full bucket, not the next request.
     */
    resetErrorMs: number | null;
    /** |resetErrorMs| (threshold `reset_accuracy_ms`). */
    resetAccuracyMs: number | null;
    /** quotaBackAt - announcedRetryAt, never negative (threshold `retry_after_accuracy_ms`). */
    retryAfterAccuracyMs: number | null;
    /** Remaining of the first admitted probe, and of one more a tenth of a window later (windows only). */
    remainingAtReturn: number | null;
    remainingAfterTenth: number | null;
  };
  limiter: LimiterReport;
  /** `--daily`: the rest of the day's quota at the plan rate, until its 429. */
  daily?: DailyWalk;
  /** Requests sent before a Retry-After had elapsed (must be 0), and whether the key was ever banned (403 or a 429 with a long delay). */
  violations: number;
  verdict: 'pass' | 'fail';
  reasons: string[];
  durationMs: number;
}

/**
 * `capacity --daily`: the day's quota walked at the plan rate (the minute limit per minute window)
 * until the day's first 429. The day's return is announced, not waited for: it is hours away.
 */
export interface DailyWalk {
  /** The plan's per-day promise, and the day window as the target counts it (time-scaled), s. */
  promised: number;
  windowSeconds: number;
  /** The minute window as the target counts it, s: the day's 429 must announce a longer wait. */
  minuteSeconds: number;
  /** Paced windows the walk took, its requests, and how many were admitted. */
  windows: number;
  sent: number;
  accepted: number;
  /** Admitted by this key over the whole probe (earlier phases included) until the day's 429. */
  acceptedByProbe: number;
  /**
   * What the key had used of its day before the probe: the day's limit less Remaining less what the
   * probe had been admitted, from the first answer that described the day window (null when none did).
   */
  usedBefore: number | null;
  /** usedBefore + acceptedByProbe when the day's 429 came (threshold `accepted_per_day`). */
  acceptedPerDay: number | null;
  /** acceptedPerDay + 1: where the day's first 429 came; null when none came within the bound. */
  first429At: number | null;
  expected429At: number;
  /** The day's 429 as it came: its X-RateLimit-Limit, Retry-After (s), X-RateLimit-Reset (Unix s). */
  limit: number | null;
  retryAfterSeconds: number | null;
  reset: number | null;
  /** Epoch ms the day's 429 came, and when it announced the quota back (Retry-After, else Reset). */
  refusedAt: number | null;
  announcedReturnAt: number | null;
  /** Refusals met at the plan rate before the day ran out (should be 0). */
  rateLimited: number;
  /** Remarks that do not fail the plan (a key used before the probe, headers that never showed the day). */
  notes: string[];
  durationMs: number;
}

/**
 * `capacity --probe-ban`: the temporary ban provoked on purpose, on a key the user named for it.
 * One window exhausted, then requests sent inside the 429's Retry-After, one at a time, until the
 * target answers differently (a 403, a code naming a ban, or a wait beyond the window's); then the
 * ban's announced end waited out and its real end probed.
 */
export interface BanReport {
  plan: string;
  timeScale: number;
  window: { name: string; limit: number; seconds: number };
  exhaust: { sent: number; accepted: number; first429At: number | null };
  strikes: {
    /** Requests sent after the first 429 and before its Retry-After elapsed. */
    sent: number;
    /** The first 429's Retry-After, s. */
    retryAfterSeconds: number | null;
    /** How many of them it took: the banning one is counted (null: no ban came). */
    toBan: number | null;
    /** The window came back before any ban did. */
    quotaReturnedFirst: boolean;
  };
  banned: boolean;
  ban: {
    status: number;
    /** The Error body's code, when it had one. */
    code: string | null;
    retryAfterSeconds: number | null;
    reset: number | null;
    remaining: number | null;
    /** The wait the ban announced (Retry-After, else X-RateLimit-Reset), s. */
    announcedSeconds: number | null;
    /** Epoch ms the ban announced its end, and when a request was first admitted again. */
    announcedEndAt: number | null;
    endedAt: number | null;
    /** endedAt - announcedEndAt: positive is a ban that outlived its announcement. */
    endErrorMs: number | null;
    /** Requests sent after the announced end until one was admitted. */
    probes: number;
    /** Whether the announced end was within --ban-max-wait and waited for. */
    waited: boolean;
  } | null;
  /** Every request the probe sent on the ban key (they are kept out of the run's figures and checks). */
  requests: number;
  verdict: 'pass' | 'fail';
  reasons: string[];
  notes: string[];
  durationMs: number;
}

/**
 * Why a step of `capacity --tenants` did not hold: a threshold failed, the target answered 5xx or
 * not at all, its limiter refused a tenant kept within its quota (or its rate-limit headers failed
 * a check), or the load generator itself could not keep the schedule (then the figures measure this
 * machine, not the target, and the result says so rather than blame the target).
 */
export type TenantBreakCause = 'threshold' | 'errors' | 'limiter' | 'generator';

/** One step of the tenant ramp: n tenants, each at its plan's full rate, for the step's length. */
export interface TenantStep {
  /** Tenants driven, all plans together. */
  tenants: number;
  /** Of them, per plan. */
  perPlan: Record<string, number>;
  /** The workload's measured span, ms. */
  durationMs: number;
  requests: number;
  /** Requests per second while the step ran. */
  rate: number;
  /** Requests per second the tenants' quotas allow together: what the step asked for. */
  offeredRate: number;
  /** Response time (from when the request was due, less our own pacing waits), ms. */
  p50Ms: number;
  p99Ms: number;
  /** Service time p99 (sent to received), ms. */
  serviceP99Ms: number;
  /** 5xx and transport errors. */
  errors: number;
  /** 429s: every tenant was paced within its quota, so each one is the limiter's doing. */
  rateLimited: number;
  /** Failures of the checks of rate-limit headers and Retry-After. */
  limiterCheckFailures: number;
  iterations: number;
  /** Iterations not started because a tenant had too many in flight already. */
  droppedIterations: number;
  /** The generator's event-loop delay p99 over the step, ms: how late its timers fired. */
  loopDelayP99Ms: number;
  /**
   * The generator process's CPU time over the step's span: 1 is one core busy throughout. Its
   * JavaScript runs on one core, so near 1 this machine, not the target, may be what ran out.
   */
  generatorCpu: number;
  /** Each `--tenant-threshold` judged on the step. */
  thresholds: { expression: string; actual: number | null; passed: boolean }[];
  held: boolean;
  /** Why it broke (absent when it held); `reasons` says it in words, the first the deciding one. */
  cause?: TenantBreakCause;
  reasons: string[];
}

/**
 * `petstore-load capacity --tenants`: tenants of a plan (or a mix in fixed proportions) at their
 * full quota, doubled until a step breaks and then bisected; the largest number that held.
 */
export interface TenantCapacity {
  /** The mix as asked: plan -> proportion (`pro` is { pro: 1 }). */
  mix: Record<string, number>;
  /** The step thresholds (`--tenant-threshold`), as given. */
  thresholds: string[];
  /** Each step's length, and the pause between steps that keeps reused keys within their windows, ms. */
  stepMs: number;
  restMs: number;
  timeScale: number;
  /** The ramp's first step and its bound (`--max-tenants`, or the keys a file gave). */
  start: number;
  maxTenants: number;
  /** An unmeasured step before the ramp (connections, JIT on both sides). */
  warmup: { tenants: number; durationMs: number } | null;
  /** The largest number of tenants that held (null: not even the first step held). */
  held: number | null;
  heldPerPlan: Record<string, number> | null;
  /** The smallest that broke, and why (null: every step held up to maxTenants). */
  brokeAt: number | null;
  cause: TenantBreakCause | null;
  reasons: string[];
  /**
   * What bounds the number: the target (a threshold, errors, its limiter), the generator (this
   * machine could not drive more: the target's own bound is above), the ramp's maximum, or nothing
   * yet (interrupted before a step broke or the maximum was reached).
   */
  boundBy: 'target' | 'generator' | 'max' | 'interrupted';
  /** The headline, e.g. "the reference server held 1,800 Pro tenants at their quota with p99 < 300 ms". */
  sentence: string;
  /** Every step, in the order run. */
  steps: TenantStep[];
}
