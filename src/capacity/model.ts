/**
 * What every stage of the capacity probe shares: the families a limiter's model falls into, and the
 * tolerances the stages measure and judge with. Kept in one place because a tolerance used by one
 * stage to measure and by another to judge must be the same number, and it was not always so
 * evident when each file kept its own copy.
 */

/**
 * How the quota comes back after a burst: all at once (a window, fixed or sliding: after a burst
 * every request of it ages out together), one request at a time (a token bucket or a GCRA, which
 * refill continuously), or unknown (it never came back, or nothing told how much did).
 */
export type Family = 'window' | 'spacing' | 'unknown';

/** `atOnce`: requests admitted at the return (Remaining + 1, or counted); `limit`: the window's. */
export function familyOf(atOnce: number | null, limit: number): Family {
  if (atOnce === null) return 'unknown';
  return atOnce >= Math.max(2, limit - 1) ? 'window' : 'spacing';
}

/**
 * How a phase's requests go: 'spread' evenly over SPREAD of a window (a window's limit binds on the
 * count), or 'spaced' at the interval plus SPACING_GUARD, one at a time (a rate binds between two sends).
 */
export type Pace = 'spread' | 'spaced';

/**
 * Headers carry whole seconds, so an announced time may be up to a second later than the truth
 * (never earlier, for a correct server); beyond that, plus scheduling slack, it is wrong.
 */
export const HEADER_GRANULARITY_MS = 1000;
/** Scheduling slack: timers, the event loop and the answers' latency on a loaded machine. */
export const SLACK_MS = 100;

/**
 * A limiter whose interval is surely this much longer than the plan's keeps less than its promise:
 * the rate search stops once its intervals agree to 1.5% (TARGET_WIDTH), well inside it.
 */
export const RATE_TOLERANCE = 0.02;

/** Probes never exceed a limit by more than this many requests (the seed bans repeated 429s). */
export const EXCESS_BOUND = 3;

/** Share of a window its requests are spread over: the rest absorbs timer and event-loop lag. */
export const SPREAD = 0.9;
/**
 * Against a limiter whose rule binds between two sends (token bucket, GCRA), requests go at the
 * plan's spacing plus this share (the margin a window's 90% spread leaves), each at least that long
 * after the one before was written: a send that a busy machine delays must not bring the next one
 * closer than the limiter's interval.
 */
export const SPACING_GUARD = 0.1;

/** A window's guard, as a share of it: enough for its last request to have left the limiter's count. */
export const GUARD_SHARE = 0.05;
/** The least guard: the timers' granularity, below which a guard keeps nothing apart. */
export const GUARD_MIN_MS = 10;
/** The pause after a window before anything that must find it whole again (a next window, a return). */
export const windowGuardMs = (windowMs: number): number => Math.max(GUARD_MIN_MS, windowMs * GUARD_SHARE);

/** The step between the return's probes: 50 ms of the unscaled plan, never finer than the timers keep. */
export const recoveryStepMs = (timeScale: number): number => Math.max(GUARD_MIN_MS, 50 / timeScale);
