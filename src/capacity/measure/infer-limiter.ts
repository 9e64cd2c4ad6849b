import type { Dialect } from '../../api/rate-limit-dialect.ts';
import type { LimiterReport, LimiterType, RateSearch, ResetSemantics } from '../../result/capacity-types.ts';
import type { Family } from '../model.ts';
import { type WindowObservations, windowModel } from './window-length.ts';

/** What the probe saw, for the limiter's model and figures (a window's, and its length: window-length.ts). */
export interface LimiterObservations extends WindowObservations {
  family: Family;
  atOnce: number | null;
  /** Of `atOnce`, those admitted a moment later, once their slots had come back (a moving window). */
  atOnceLate?: number;
  remainingAfterTenth: number | null;
  headerDialect: Dialect | 'none';
  resetSemantics: ResetSemantics;
  /** The rate search, when it ran. */
  search: RateSearch | undefined;
  estimate: { intervalMs: number; burst: number } | null;
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
  if (o.blocked && o.estimate) return { ...base, ...blockedRate(o.estimate, evidence), evidence };
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
  if (o.blocked && o.estimate && o.family !== 'window')
    return ['its return after an excess is hidden behind its block: the rate is the one admitted after it'];
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
        ? o.atOnceLate
          ? `the whole quota came back at its return (${o.atOnce} admitted, ${o.atOnceLate} of them a moment later, each once a window had passed since the burst's request it replaced: its slots come back as the burst spent them)`
          : `the whole quota came back at once (${o.atOnce} admitted back to back at its return)`
        : `${o.atOnce} request(s) came back at once, the next was refused: the quota returns one by one`,
    ];
  return [
    o.family === 'window'
      ? `the whole quota came back at once (Remaining ${o.atOnce - 1} of ${limit})`
      : `only part of the quota came back (Remaining ${o.atOnce - 1} of ${limit})`,
  ];
}

/**
 * Told nothing of its model, a limiter that blocks at its first excess: a window of its burst or a
 * bucket of it refilled at the rate kept after the block admit alike at that pace, and telling them
 * apart would cost another excess, and another block. The rate is reported, the model is not.
 */
function blockedRate(estimate: { intervalMs: number; burst: number }, evidence: string[]) {
  const perSecond = round(1000 / estimate.intervalMs, 4);
  evidence.push(
    `${estimate.burst + 1} admitted at once from rest and ${perSecond}/s kept after the block: a window of ${estimate.burst + 1} or a bucket of it refilled at that rate, which admit alike at that pace`,
  );
  return { type: 'unknown' as const, sustainedPerSecond: perSecond, burst: estimate.burst + 1, window: null };
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
