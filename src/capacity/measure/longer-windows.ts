import type { Plan, RateWindow } from '../../api/plans.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { CapacityReport, LimiterWindow } from '../../result/capacity-types.ts';
import { exhaustWindow } from '../discover/exhaust.ts';
import { EXCESS_BOUND } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';
import { longerThanWindow } from './block.ts';
import { type FirstRound, type LongerMeasure, notMeasured, returnOf } from './longer-return.ts';

export type { LongerMeasure } from './longer-return.ts';

/**
 * A plan's windows longer than the one the phases measured (10 per 10 s beside 20 per 30 s; a
 * minute beside a day). Each one that bursts at the shorter window's rate can fill within its
 * length, and whose length is within --max-wait, is measured: from a moment it held nothing, the
 * shorter window is spent at each of its returns until a refusal is the longer window's (longerRefusal).
 * What was admitted until then is the longer window's limit, and the told return, counted from the
 * first of them, its length. A window that cannot be filled so (a day of 1000 beside 60 a minute) binds
 * only a client that keeps at it for hours: `--daily` walks it.
 */

/**
 * The plan's longer windows the phases' requests could fill (the paced ones, and the burst to come):
 * those the exhaustion waits out, and the longer-window phase measures.
 */
export function windowsWithinReach(
  plan: Plan,
  short: RateWindow,
  pacedSent: number,
  maxWaitMs: number,
): RateWindow[] {
  const most = pacedSent + short.limit + EXCESS_BOUND + 1;
  return plan.windows.filter(
    (w) => w.seconds > short.seconds && w.limit < most && w.seconds * 1000 <= maxWaitMs,
  );
}

/** The longest of those windows, ms (0: none): what the probe's time estimates add. */
export function longestWithinReachMs(
  plan: Plan,
  short: RateWindow,
  pacedSent: number,
  maxWaitMs: number,
): number {
  return Math.max(0, ...windowsWithinReach(plan, short, pacedSent, maxWaitMs).map((w) => w.seconds * 1000));
}

export interface SpendLongerOptions {
  short: RateWindow;
  guardMs: number;
  /** When the longer windows last held nothing: the exhaustion's first request, once they were waited out. */
  freshAt: number | undefined;
  /** The windows within reach (windowsWithinReach): never more is spent than the largest limit, and a window. */
  reach: readonly RateWindow[];
  maxWaitMs: number;
  /**
   * Spend half the short window first, then wait it out: at the longer window's return a moving
   * window gives back that half alone, a fixed one its whole count (longer-return.ts counts which).
   * Only where nothing was spent since `freshAt`: a whole first round would be all that returns first.
   */
  halfFirst?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Spends the shorter window at each of its returns until a refusal is the longer window's, then
 * waits out its told return (within --max-wait) and counts what came back: admitted, it is measured.
 */
export async function spendLonger(
  client: ProbeClient,
  o: SpendLongerOptions,
): Promise<LongerMeasure | undefined> {
  const freshAt = o.freshAt;
  if (o.reach.length === 0 || freshAt === undefined || o.signal?.aborted) return undefined;
  const shortMs = o.short.seconds * 1000;
  const most = Math.max(...o.reach.map((w) => w.limit));
  const counted = () => client.history.filter((s) => s.admitted && s.at >= freshAt).length;
  const deadline = freshAt + o.maxWaitMs;
  o.log?.(
    `the longer window is measured: the ${o.short.seconds} s window spent at each of its returns until a 429 is the longer window's`,
  );
  const firstRound = o.halfFirst ? await halfRound(client, o) : undefined;
  const back = { ...o, freshAt, firstRound };
  if (longerThanWindow(client.pauseUntil - now(), shortMs, o.guardMs))
    return returnOf(client, counted(), undefined, back);
  for (let round = 1; !o.signal?.aborted && counted() <= most + o.short.limit && now() < deadline; round++) {
    await sleepUntil(Math.max(now(), client.pauseUntil + 1), o.signal);
    const burst = await exhaustWindow(client, o.short.limit, o.signal);
    if (burst.sent === 0) break;
    const refusal = burst.refusal;
    // After the half round the short window was waited out: the first whole round is fresh too.
    const fresh = round > 1 || firstRound !== undefined;
    if (refusal && longerRefusal(refusal, client.pauseUntil - now(), fresh ? burst.accepted : null, o))
      return returnOf(client, counted(), refusal, back);
  }
  return notMeasured(
    `no 429 was a longer window's after ${counted()} admitted: no longer window binds within reach`,
  );
}

/**
 * Half the short window, one request after another from the fresh moment, then the short window
 * waited out: what the longer window's return is counted against. Undefined when it could not be
 * sent whole (a refusal already: the return is then read as without it).
 */
async function halfRound(client: ProbeClient, o: SpendLongerOptions): Promise<FirstRound | undefined> {
  const count = Math.floor(o.short.limit / 2);
  if (count < 1) return undefined;
  await sleepUntil(Math.max(now(), o.freshAt ?? 0, client.pauseUntil + 1), o.signal);
  let startedAt: number | undefined;
  for (let i = 0; i < count && !o.signal?.aborted; i++) {
    const r = await client.request(0);
    startedAt ??= r.sentAt;
    if (!admitted(r)) return undefined;
  }
  if (startedAt === undefined) return undefined;
  await sleepUntil(startedAt + o.short.seconds * 1000 + o.guardMs, o.signal);
  return { count, nextAt: now() };
}

/**
 * A refusal is a longer window's when its wait outlasts the shorter window, when its headers name a
 * larger Limit (each window writing its own, or telling the nearer to spent), or, told nothing, when
 * it came before a fresh shorter window's limit was reached (`accepted`: null for a window not fresh).
 */
function longerRefusal(
  r: ProbeReply,
  waitMs: number,
  accepted: number | null,
  o: SpendLongerOptions,
): boolean {
  if (longerThanWindow(waitMs, o.short.seconds * 1000, o.guardMs)) return true;
  if (r.rateLimit.limit !== undefined) return r.rateLimit.limit > o.short.limit;
  return accepted !== null && accepted < o.short.limit;
}

/**
 * Every window of the plan, in the plan's order (shortest first): the one the phases measured, the
 * longer one the phase above measured (paired with the plan's window nearest its length, whatever
 * that length), the day the walk counted; any other listed unmeasured, saying why.
 */
export function limiterWindows(
  report: CapacityReport,
  plan: Plan,
  shortest: RateWindow,
  longer: LongerMeasure | undefined,
  limitsTold: readonly number[],
): LimiterWindow[] {
  const l = report.limiter;
  const longerOnes = plan.windows.filter((w) => w !== shortest);
  const seconds = longer?.measured ? longer.seconds : null;
  const paired =
    seconds === null
      ? undefined
      : longerOnes.reduce<RateWindow | undefined>(
          (best, w) => (!best || off(seconds, w) < off(seconds, best) ? w : best),
          undefined,
        );
  return plan.windows.map((w) =>
    w === shortest
      ? {
          limit: l.window?.limit ?? w.limit,
          seconds: l.window?.seconds ?? w.seconds,
          type: l.type,
          measured: l.window !== null,
          evidence: l.window ? 'the window the phases measured' : 'the limiter measured is no window',
        }
      : longerEntry(w, w === paired ? longer : undefined, report, limitsTold, longer),
  );
}

/** How far a measured length is from a window's, relative to it. */
const off = (seconds: number, w: RateWindow) => Math.abs(seconds - w.seconds) / w.seconds;

function longerEntry(
  w: RateWindow,
  mine: LongerMeasure | undefined,
  report: CapacityReport,
  limitsTold: readonly number[],
  longer: LongerMeasure | undefined,
): LimiterWindow {
  const walked = report.daily;
  if (walked && near(walked.windowSeconds, w.seconds) && walked.acceptedPerDay !== null)
    return {
      limit: walked.acceptedPerDay,
      seconds: w.seconds,
      type: 'unknown',
      measured: true,
      evidence: 'counted by the daily walk',
    };
  if (mine?.measured && mine.seconds !== null)
    return {
      limit: mine.limit ?? w.limit,
      seconds: mine.seconds,
      type: mine.type,
      measured: true,
      evidence: mine.evidence,
    };
  const told = limitsTold.includes(w.limit) ? '; the headers told its limit' : '';
  const why =
    longer && !longer.measured
      ? longer.evidence
      : `the plan's, not measured: ${w.limit} per ${w.seconds} s cannot be filled by the shorter window's bursts within --max-wait`;
  return { limit: w.limit, seconds: w.seconds, type: 'unknown', measured: false, evidence: `${why}${told}` };
}

const near = (a: number, b: number) => Math.abs(a - b) <= 0.1 * b;

/** Why the longer windows break the plan: one admitted less than promised, or counted for longer. */
export function windowReasons(windows: readonly LimiterWindow[], plan: Plan, shortest: RateWindow): string[] {
  const reasons: string[] = [];
  plan.windows.forEach((w, i) => {
    const m = windows[i];
    if (w === shortest || !m?.measured) return;
    if (m.limit < w.limit)
      reasons.push(`the ${w.name} window admitted ${m.limit}, fewer than the plan's ${w.limit}`);
    if (m.seconds > w.seconds * 1.1)
      reasons.push(
        `the ${w.name} window counted requests for ${m.seconds} s, longer than the plan's ${w.seconds} s`,
      );
  });
  return reasons;
}

/**
 * The model-first order: the burst from rest and its return spent the longer windows before anything
 * knew of them, and left them a remainder no rate can be read from. Each is measured from a moment
 * it holds nothing again (half a short window first, so that its return tells moving from fixed);
 * `wholeAt`: when what this spent has left it again, the earliest the plan-rate windows may begin.
 */
export async function longerFromRest(
  client: ProbeClient,
  o: Omit<SpendLongerOptions, 'freshAt' | 'halfFirst'>,
): Promise<{ longer: LongerMeasure | undefined; wholeAt: number }> {
  if (o.reach.length === 0 || o.signal?.aborted) return { longer: undefined, wholeAt: 0 };
  const longestMs = Math.max(...o.reach.map((w) => w.seconds * 1000));
  const wholeAfter = () =>
    client.history.reduce((last, s) => (s.admitted ? Math.max(last, s.at) : last), 0) + longestMs + o.guardMs;
  const freshAt = Math.max(wholeAfter(), client.pauseUntil + 1);
  o.log?.(
    `the plan's ${Math.round(longestMs / 100) / 10} s window counted the burst and its return: it is measured once they have left it`,
  );
  await sleepUntil(freshAt, o.signal);
  const longer = await spendLonger(client, { ...o, freshAt, halfFirst: true });
  return { longer, wholeAt: wholeAfter() };
}
