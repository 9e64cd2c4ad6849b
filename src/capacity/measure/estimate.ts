import type { Ramp } from '../discover/concurrency.ts';
import { GUARD_MIN_MS, GUARD_SHARE, type Pace, SPACING_GUARD, SPREAD, windowGuardMs } from '../model.ts';
import { rateSearchBoundMs } from './rate-search.ts';

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * What the rest of a plan's probe takes, once its first answers told the latency, the order and how
 * many requests may be in flight: said again then, because before the first answer it cannot be
 * known, and against a slow target the sequential phases cost a round trip per request.
 */
export interface EstimateInput {
  windowMs: number;
  limit: number;
  windows: number;
  latencyMs: number;
  /** Requests in flight the phases may keep (1 unless a concurrency limit or Remaining allows more). */
  inFlight: number;
  /** Requests of the burst from rest still to send (0 once it met its refusal). */
  exhaustLeft: number;
  pace: Pace;
  /** Time before the paced windows: the quota's return (a window, an interval). */
  beforePacedMs: number;
}

/** One paced window: the plan's spacing, or the round trips when they are slower, then the guard. */
function pacedWindowMs(o: EstimateInput, last: boolean): number {
  const guard = windowGuardMs(o.windowMs);
  const spacing =
    o.pace === 'spaced' ? (o.windowMs / o.limit) * (1 + SPACING_GUARD) : (o.windowMs * SPREAD) / o.limit;
  // Spaced requests go one at a time; spread ones as many as the gate allows.
  const perRequest =
    o.pace === 'spaced' ? Math.max(spacing, o.latencyMs) : Math.max(spacing, o.latencyMs / o.inFlight);
  const sending = (o.limit - 1) * perRequest + o.latencyMs;
  return last ? sending : Math.max(sending, o.windowMs + guard + o.latencyMs);
}

export function remainingEstimateMs(o: EstimateInput): number {
  const exhaust = Math.ceil(o.exhaustLeft / o.inFlight) * o.latencyMs;
  let paced = 0;
  for (let k = 0; k < o.windows; k++) paced += pacedWindowMs(o, k === o.windows - 1);
  return exhaust + o.beforePacedMs + paced;
}

/** The model's check (model-check.ts): the quota left to rest a window, then a window at the model's pace. */
const checkEstimateMs = (windowMs: number) =>
  windowMs * (1 + Math.max(GUARD_SHARE, GUARD_MIN_MS / windowMs) + SPREAD);

/**
 * Whether N requests of a window can be sent within it at the latency seen: each in flight for a
 * round trip, `inFlight` at once. When not, the plan rate cannot be kept, whatever the limiter does.
 */
export function pacedInfeasible(o: {
  windowMs: number;
  limit: number;
  latencyMs: number;
  inFlight: number;
  windowName: string;
}): string | undefined {
  const needMs = (o.limit * o.latencyMs) / o.inFlight;
  if (needMs <= o.windowMs * SPREAD) return undefined;
  return `the plan rate cannot be kept: ${o.limit} requests of ${Math.round(o.latencyMs)} ms each, ${o.inFlight} in flight at most, take ${Math.round(needMs / 100) / 10} s, more than the ${Math.round(o.windowMs / 100) / 10} s ${o.windowName} window: the paced windows were not sent`;
}

/**
 * A window measured window-first: the paced windows (each a window and its guard after the one
 * before began), the fresh window spent at growing concurrency, then the wait for its end and a
 * tenth of a window more. Whole-second headers make the wait up to a second longer: left out, so
 * that the estimate scales with the time scale, and well inside its 25%.
 */
export function windowFirstEstimateMs(o: {
  windowMs: number;
  limit: number;
  windows: number;
  latencyMs: number;
  /** The longest of the plan's longer windows within reach (0: none): waited for, then spent. */
  longerMs?: number;
}): number {
  const guard = windowGuardMs(o.windowMs);
  const paced = o.windows * (o.windowMs + guard + o.latencyMs);
  const bursts = Math.ceil(Math.log2(Math.max(2, o.limit))) + 1;
  const exhaust = bursts * o.latencyMs;
  const recovery = Math.max(o.windowMs - exhaust, 0) + o.windowMs / 10 + 2 * o.latencyMs;
  const longer = o.longerMs ?? 0;
  // Its paced requests waited out before the exhaustion; then it is spent from there to its return.
  const spent = longer > 0 ? longer + guard + Math.max(0, longer - exhaust - recovery) : 0;
  // The model found is the plan's as a rule: the paced windows were its check (model-check.ts).
  return paced + exhaust + recovery + spent;
}

/**
 * The time told again once the burst from rest showed the latency and the order, and whether the
 * plan rate can be kept at all (`infeasible`: why the paced windows will not be sent).
 */
export function afterFirstBurst(o: {
  windowMs: number;
  limit: number;
  windowName: string;
  windows: number;
  ramp: Ramp;
  exhaustLeft: number;
  /** A queue's release interval: its quota is back an interval after the last release. */
  queueIntervalMs?: number;
  elapsedMs: number;
}): { infeasible: string | undefined; line: string } {
  const { ramp, queueIntervalMs } = o;
  const refused = ramp.exhausted.refusal !== undefined;
  const spaced = refused || queueIntervalMs !== undefined;
  // Spaced requests go one at a time, whatever the target allows in flight.
  const inFlight = spaced ? 1 : (ramp.maxInFlight ?? 1);
  const infeasible = pacedInfeasible({
    windowMs: o.windowMs,
    limit: o.limit,
    latencyMs: ramp.latencyMs,
    inFlight,
    windowName: o.windowName,
  });
  const base = {
    windowMs: o.windowMs,
    limit: o.limit,
    windows: infeasible ? 0 : o.windows,
    latencyMs: ramp.latencyMs,
    inFlight: ramp.maxInFlight ?? 1,
    exhaustLeft: o.exhaustLeft,
  };
  // A model is checked where the burst met a refusal (a rate) and its pace can be kept.
  const check = (refused || queueIntervalMs !== undefined) && !infeasible ? checkEstimateMs(o.windowMs) : 0;
  const about =
    check +
    (queueIntervalMs !== undefined
      ? remainingEstimateMs({ ...base, pace: 'spaced', beforePacedMs: queueIntervalMs + ramp.latencyMs })
      : remainingEstimateMs({ ...base, pace: refused ? 'spaced' : 'spread', beforePacedMs: 0 }));
  const search = refused && queueIntervalMs === undefined ? rateSearchBoundMs(o.windowMs, o.limit) : 0;
  const limit =
    ramp.maxInFlight !== null
      ? `, at most ${ramp.maxInFlight} in flight`
      : queueIntervalMs !== undefined
        ? `, a queue of ${ramp.queue}`
        : '';
  const elapsed = o.elapsedMs;
  const line = `the first answers took ${Math.round(ramp.latencyMs)} ms${limit}: about ${seconds(elapsed + about)} in all${search ? `, at most ${seconds(elapsed + about + search)} with the search for the rate` : ''}`;
  return { infeasible, line };
}
