import type { LimiterType } from '../../result/capacity-types.ts';
import { HEADER_GRANULARITY_MS, SLACK_MS } from '../model.ts';

/** What the probe saw of a window: its model (fixed or sliding) and its length are read from these. */
export interface WindowObservations {
  /** The plan's shortest window as the target counts it. */
  plan: { limit: number; seconds: number };
  /** Admitted back to back from rest until the first 429 (null: no 429 within the bound). */
  burstAdmitted: number | null;
  burstStartedAt: number | undefined;
  quotaBackAt: number | null;
  /** How the return's count was known: Remaining told it, or requests sent at once counted it. */
  atOnceFrom: 'remaining' | 'counted';
  /** The Limit the answers told, and the window a declared policy gives it (IETF `w`). */
  headerLimit: number | undefined;
  declaredWindowSeconds: number | undefined;
  resetValuesPerWindow: number[];
  /**
   * The span between successive resets the paced windows were told, when every one came a whole
   * number of it after the one before: a window aligned to the clock (absent: none such).
   */
  toldResetSpanSeconds?: number;
  /** The intervals in agreement when the quota first came back. */
  returnRangeMs: { low: number; high: number } | null;
  /** The excess was met by a block: the quota's return after it is the block's end, not the window's. */
  blocked?: boolean;
  /** Tolerance of a return probed at an announcement (whole seconds, probe steps), ms. */
  returnSlackMs: number;
  /**
   * The paced windows were each admitted the plan's whole limit, a window and a guard apart: the
   * window is no longer than the plan's, whatever the latency added to its measured return.
   */
  pacedKept?: boolean;
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** A window: fixed when the announced reset stays put within a window, sliding when it moves. */
export function windowModel(o: WindowObservations, evidence: string[]) {
  const windows = o.resetValuesPerWindow.filter((n) => n > 0);
  let type: LimiterType = 'unknown';
  // A window aligned to the clock, paced from anywhere in it, tells two resets in a paced window
  // that straddles its boundary, a whole window apart: not a sliding window's reset moving on.
  const span = o.toldResetSpanSeconds;
  const aligned = span !== undefined && span >= o.plan.seconds / 2 && windows.every((n) => n <= 2);
  if (windows.length > 0) {
    const stable = windows.every((n) => n === 1) || aligned;
    type = stable ? 'fixed-window' : 'sliding-window';
    evidence.push(
      windows.every((n) => n === 1)
        ? 'the announced reset stayed the same within each window'
        : aligned
          ? `the announced reset moved only by whole windows of ${span} s: a fixed window aligned to the clock`
          : `the announced reset moved within a window (${Math.max(...windows)} different resets)`,
    );
  } else evidence.push('no reset announced during the paced windows: fixed or sliding cannot be told apart');
  const limit = o.headerLimit ?? o.burstAdmitted ?? o.plan.limit;
  const seconds = windowSeconds(o, evidence);
  return {
    type,
    sustainedPerSecond: seconds === null ? null : round(limit / seconds, 4),
    burst: limit,
    window: seconds === null ? null : { limit, seconds },
  };
}

/**
 * The window's length, measured: from the burst's first request to the quota's return. Announced
 * times are whole seconds and the return is probed no sooner than announced, so the return comes
 * up to a second (and a probe step) after the window's true end; a window declared by the headers,
 * else the plan's, that fits the measurement is the one reported.
 */
function windowSeconds(o: WindowObservations, evidence: string[]): number | null {
  if (o.blocked) {
    const seconds = o.declaredWindowSeconds ?? o.plan.seconds;
    evidence.push(
      `the quota came back when the block ended, which hides the window's own return: a window of ${seconds} s, as ${o.declaredWindowSeconds === undefined ? 'the plan says' : 'the headers declare'}`,
    );
    return seconds;
  }
  let low: number;
  let high: number;
  if (o.atOnceFrom === 'counted' && o.returnRangeMs) {
    ({ low, high } = o.returnRangeMs);
    low /= 1 + SLACK_MS / 1000;
  } else if (o.quotaBackAt !== null && o.burstStartedAt !== undefined) {
    high = o.quotaBackAt - o.burstStartedAt + SLACK_MS;
    low = high - HEADER_GRANULARITY_MS - o.returnSlackMs - 2 * SLACK_MS;
  } else return null;
  let fits = [o.declaredWindowSeconds, o.plan.seconds].find(
    (s) => s !== undefined && s * 1000 >= low && s * 1000 <= high,
  );
  // Late by a latency, not by another window's length: a second, or a tenth of the window, at most.
  const lateBy = low - o.plan.seconds * 1000;
  if (fits === undefined && o.pacedKept && lateBy > 0 && lateBy <= Math.max(1000, o.plan.seconds * 100)) {
    fits = o.plan.seconds;
    evidence.push(
      `the paced windows were each admitted ${o.plan.limit}, a window apart: the return came later than the window by the answers' latency`,
    );
  }
  // A window aligned to the clock began before the burst's first request: its return came sooner
  // than a whole window after it, and the told resets say how long the window is.
  const span = o.toldResetSpanSeconds;
  if (fits === undefined && span !== undefined && high <= span * 1000 + HEADER_GRANULARITY_MS) {
    fits = span;
    evidence.push(
      `the told resets came ${span} s apart, window after window: a window of ${span} s aligned to the clock, begun before the burst's first request`,
    );
  }
  const seconds = fits ?? round(high / 1000, 2);
  evidence.push(
    `the quota came back between ${round(low / 1000, 2)} and ${round(high / 1000, 2)} s after the window's first request: ${fits === undefined ? 'at most' : 'a window of'} ${seconds} s`,
  );
  return seconds;
}
