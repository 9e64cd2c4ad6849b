import { formatInstant } from '../api/duration.ts';
import type { RunResult } from '../result/types.ts';

/**
 * Holds the server made, in its own words: a pause or a told budget that outlived the run, and a
 * paced run that its told budget held for most of its time. The terminal summary, the report and
 * the markdown summary say them alike.
 */

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * A hold the run could not wait out, named by what it was and in the server's words: `paused by the
 * server until ... (Retry-After 999999999 s)`, `held by the server's told budget until ...
 * (RateLimit remaining=0, reset=10)`.
 */
export function describeHeldPastEnd(held: NonNullable<RunResult['compliance']['heldPastEnd']>): string {
  const lead =
    held.cause === 'budget'
      ? "held by the server's told budget"
      : held.cause === 'pause'
        ? held.by.startsWith('backoff')
          ? 'paused after refusals'
          : 'paused by the server'
        : held.cause === 'pacing'
          ? 'held'
          : // Results written before the cause was: told by the words.
            /^(Retry-After|X-RateLimit|backoff)/.test(held.by)
            ? 'paused by the server'
            : 'held';
  return `${lead} until ${formatInstant(held.until)} (${held.by})`;
}

/** More than this share of a paced run held by the server's told budget is said in a line of its own. */
const HELD_MOST = 0.5;

/**
 * A paced run that the target's own told budget held for most of its time measured the target's
 * word, not its service: one line says so, with the fields that held it and what to do.
 */
export function heldMostLine(result: RunResult): string | undefined {
  const hold = result.compliance.budgetHold;
  const runMs = result.meta.durationSeconds * 1000;
  if (!result.config.enforce || !hold || runMs <= 0 || hold.ms <= runMs * HELD_MOST) return undefined;
  const key = result.byPlan || result.byTenantGroup ? 'a key' : 'the key';
  const share = `${Math.round(Math.min(1, hold.ms / runMs) * 100)}%`;
  return `the target's own fields held ${key} ${seconds(hold.ms)} of the run's ${seconds(runMs)} (${share}): ${hold.fields}, its told budget spent until its reset; --enforce off if it is a mock that always says 0, else a key of a bigger plan or a longer --duration`;
}
