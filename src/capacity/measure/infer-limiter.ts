import type { Dialect } from '../../api/rate-limit-dialect.ts';
import type { LimiterReport, LimiterType, RateSearch, ResetSemantics } from '../../result/capacity-types.ts';
import { HEADER_GRANULARITY_MS, SLACK_MS } from '../verify/verdict.ts';

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

/** What the probe saw, for the limiter's model and figures. */
export interface LimiterObservations {
  family: Family;
  /** The plan's shortest window as the target counts it. */
  plan: { limit: number; seconds: number };
  /** Admitted back to back from rest until the first 429 (null: no 429 within the bound). */
  burstAdmitted: number | null;
  burstStartedAt: number | undefined;
  quotaBackAt: number | null;
  atOnce: number | null;
  /** How `atOnce` was known: Remaining told it, or requests sent at once counted it. */
  atOnceFrom: 'remaining' | 'counted';
  remainingAfterTenth: number | null;
  /** The Limit the answers told, and the window a declared policy gives it (IETF `w`). */
  headerLimit: number | undefined;
  declaredWindowSeconds: number | undefined;
  resetValuesPerWindow: number[];
  headerDialect: Dialect | 'none';
  resetSemantics: ResetSemantics;
  /** The rate search, when it ran; `returnRangeMs`: the intervals in agreement when the quota first came back. */
  search: RateSearch | undefined;
  estimate: { intervalMs: number; burst: number } | null;
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
  /** Requests a limiter held and released at its rate: `search` then tells their release, not a search. */
  queue?: number;
}

export const RESET_SEMANTICS: Record<Dialect, ResetSemantics> = {
  seed: 'unix-seconds',
  'seconds-until': 'seconds-until',
  'unix-ms': 'unix-ms',
  'ietf-8': 'seconds-until',
  'ietf-7': 'seconds-until',
  'ietf-6': 'seconds-until',
};

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The limiter as a client sees it: its model, rate, burst and window, each with the evidence for it. */
export function inferLimiter(o: LimiterObservations): LimiterReport {
  const evidence = [dialectEvidence(o), ...returnEvidence(o)];
  const base = {
    headerDialect: o.headerDialect,
    resetSemantics: o.resetSemantics,
    rateSearch: o.search ?? null,
    slowDown: null,
  };
  if (o.family === 'window') return { ...base, ...windowModel(o, evidence), evidence };
  if (o.family === 'spacing') return { ...base, ...spacingModel(o, evidence), evidence };
  return { ...base, type: 'unknown', sustainedPerSecond: null, burst: null, window: null, evidence };
}

function dialectEvidence(o: LimiterObservations): string {
  if (o.headerDialect === 'none')
    return 'no rate-limit headers: every figure below is timed from the answers';
  const reset =
    o.resetSemantics === 'none'
      ? 'no reset'
      : `the reset as ${o.resetSemantics === 'unix-seconds' ? 'a Unix time in seconds' : o.resetSemantics === 'unix-ms' ? 'a Unix time in ms' : 'seconds until it'}`;
  return `rate-limit headers in the ${o.headerDialect} dialect, ${reset}`;
}

function returnEvidence(o: LimiterObservations): string[] {
  if (o.burstAdmitted === null) return ['no 429 for the rate within the burst: no rate limit seen'];
  if (o.queue) return [];
  if (o.atOnce === null)
    return [
      o.burstAdmitted === null
        ? 'no 429 came: no quota to come back'
        : o.quotaBackAt === null
          ? 'the quota never came back after the 429'
          : 'the first admitted request after the 429 told no Remaining',
    ];
  const limit = o.headerLimit ?? o.burstAdmitted ?? o.plan.limit;
  if (o.atOnceFrom === 'counted')
    return [
      o.family === 'window'
        ? `the whole quota came back at once (${o.atOnce} admitted back to back at its return)`
        : `${o.atOnce} request(s) came back at once, the next was refused: the quota returns one by one`,
    ];
  return [
    o.family === 'window'
      ? `the whole quota came back at once (Remaining ${o.atOnce - 1} of ${limit})`
      : `only part of the quota came back (Remaining ${o.atOnce - 1} of ${limit})`,
  ];
}

/** A window: fixed when the announced reset stays put within a window, sliding when it moves. */
function windowModel(o: LimiterObservations, evidence: string[]) {
  const windows = o.resetValuesPerWindow.filter((n) => n > 0);
  let type: LimiterType = 'unknown';
  if (windows.length > 0) {
    const stable = windows.every((n) => n === 1);
    type = stable ? 'fixed-window' : 'sliding-window';
    evidence.push(
      stable
        ? 'the announced reset stayed the same within each window'
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
function windowSeconds(o: LimiterObservations, evidence: string[]): number | null {
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
  const seconds = fits ?? round(high / 1000, 2);
  evidence.push(
    `the quota came back between ${round(low / 1000, 2)} and ${round(high / 1000, 2)} s after the window's first request: ${fits === undefined ? 'at most' : 'a window of'} ${seconds} s`,
  );
  return seconds;
}

/**
 * A token bucket or a GCRA: they admit exactly alike (a bucket of size C is a GCRA of burst C - 1),
 * so the name follows the burst: a bucket that holds a whole window's limit is what APIs call a
 * token bucket; a smaller burst, down to none, is nginx's limit_req and the gateways' GCRA.
 */
function spacingModel(o: LimiterObservations, evidence: string[]) {
  const admittedAtOnce = o.burstAdmitted ?? 0;
  const bucket = admittedAtOnce >= o.plan.limit;
  const type: LimiterType = bucket ? 'token-bucket' : 'gcra';
  const gcraBurst = o.estimate?.burst ?? Math.max(0, admittedAtOnce - 1);
  evidence.push(
    bucket
      ? `${admittedAtOnce} admitted at once from rest, as many as the window's ${o.plan.limit}: a token bucket of ${gcraBurst + 1}`
      : `${admittedAtOnce} admitted at once from rest, fewer than the window's ${o.plan.limit}: a GCRA with burst ${gcraBurst}`,
  );
  if (o.remainingAfterTenth !== null && o.atOnce !== null)
    evidence.push(
      `a tenth of a window later ${o.remainingAfterTenth - o.atOnce + 2} more (a steady refill at the plan's rate gives about ${round(o.plan.limit / 10, 1)})`,
    );
  const s = o.search;
  if (s?.intervalMs && o.queue)
    evidence.push(
      `the held answers were released one per ${round(s.intervalMs.low, 1)} to ${round(s.intervalMs.high, 1)} ms (${s.probes} requests, ${s.refused} refused, ${round(s.durationMs / 1000, 1)} s)`,
    );
  else if (s?.intervalMs)
    evidence.push(
      `the rate search: one request per ${round(s.intervalMs.low, 1)} to ${round(s.intervalMs.high, 1)} ms agrees with every answer (${s.probes} requests, ${s.refused} refused, ${round(s.durationMs / 1000, 1)} s)`,
    );
  return {
    type,
    sustainedPerSecond: o.estimate ? round(1000 / o.estimate.intervalMs, 4) : null,
    burst: bucket ? gcraBurst + 1 : gcraBurst,
    window: null,
  };
}
