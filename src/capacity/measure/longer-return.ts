import type { RateWindow } from '../../api/plans.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { LimiterType } from '../../result/capacity-types.ts';
import { HEADER_GRANULARITY_MS } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';

/**
 * A longer window's return, once its refusal was met (longer-windows.ts spends it): its length from
 * its first admitted request, and whether its slots come back one by one (a moving window, a sliding
 * log) or all at once (a fixed window).
 */

/** What the longer-window phase measured (or why it measured nothing). */
export interface LongerMeasure {
  limit: number | null;
  seconds: number | null;
  /** How its count came back: `fixed-window` all at once, `sliding-window` one slot at a time. */
  type: LimiterType;
  measured: boolean;
  evidence: string;
}

/**
 * The first round of the longer window's spending, when it was smaller than the short window's
 * limit: at the return a moving window gives back that round's slots alone, the next round's coming
 * back only as long after it as the round came after the first.
 */
export interface FirstRound {
  count: number;
  /** When the next round's first request left. */
  nextAt: number;
}

export interface ReturnOptions {
  short: RateWindow;
  guardMs: number;
  maxWaitMs: number;
  /** When the longer window last held nothing. */
  freshAt: number;
  firstRound?: FirstRound;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

const tenths = (ms: number) => Math.round(ms / 100) / 10;

export const notMeasured = (evidence: string): LongerMeasure => ({
  limit: null,
  seconds: null,
  type: 'unknown',
  measured: false,
  evidence,
});

/**
 * The longer window's refusal: its wait waited out, then what came back counted. Its length counts
 * from its first admitted request, not from when it was known to hold nothing: a moving window
 * gives that request's slot back first, a fixed one (from a key's first request) begins with it,
 * and any time before it would be counted into the length (20 per 41.1 s read for 20 per 30 s).
 */
export async function returnOf(
  client: ProbeClient,
  limit: number,
  refusal: ProbeReply | undefined,
  o: ReturnOptions,
): Promise<LongerMeasure> {
  const told = client.pauseUntil;
  const wait = told - now();
  if (wait > o.maxWaitMs)
    return {
      ...notMeasured(
        `${limit} admitted, then a 429 told a wait of ${tenths(wait)} s, longer than --max-wait (${tenths(o.maxWaitMs)} s): not waited out`,
      ),
      limit,
    };
  o.log?.(`${limit} admitted, then a 429 told a wait of ${tenths(wait)} s: waited out`);
  const spent = client.history.filter((s) => s.admitted && s.at >= o.freshAt).map((s) => s.at);
  const firstAt = spent.length > 0 ? Math.min(...spent) : o.freshAt;
  const lastAt = spent.length > 0 ? Math.max(...spent) : o.freshAt;
  // Counted at the return, the short window must be whole again, or its own limit is what is counted.
  const at = o.firstRound ? Math.max(told + 1, lastAt + o.short.seconds * 1000 + o.guardMs) : told + 1;
  await sleepUntil(at, o.signal);
  const seen = await countBack(client, o.firstRound ? o.firstRound.count + 1 : 1);
  const back = seen[0];
  if (!back || !admitted(back))
    return {
      ...notMeasured(`${limit} admitted, then refused again after the told wait of ${tenths(wait)} s`),
      limit,
    };
  // Retry-After is told in whole seconds, rounded up: the told instant is the return, the probe's own
  // wait for the short window added nothing to the length.
  const seconds = tenths(told - firstAt);
  // A moving window gives the next round's slots back as long after the first round's as it came.
  const nextBack = o.firstRound ? o.firstRound.nextAt + (told - firstAt) : 0;
  const { type, how } = o.firstRound
    ? countedReturn(seen, o.firstRound, nextBack - now())
    : toldReturn(refusal, told);
  return {
    limit,
    seconds,
    type,
    measured: true,
    evidence: `${limit} admitted from its first request until a 429 told a wait of ${tenths(wait)} s; admitted again then, ${seconds} s after the first of them: a window of ${limit} per ${seconds} s; ${how}`,
  };
}

/** Requests one after another, until one is refused or `n` were sent. */
async function countBack(client: ProbeClient, n: number): Promise<ProbeReply[]> {
  const seen: ProbeReply[] = [];
  while (seen.length < n) {
    const r = await client.request(0);
    seen.push(r);
    if (!admitted(r)) break;
  }
  return seen;
}

/**
 * Counted at the return: a fixed window gives back its whole count, more than the first round's; a
 * moving one that round's slots alone, while the next round's are still counted (`before`: the
 * count came before they could return).
 */
function countedReturn(
  seen: readonly ProbeReply[],
  first: FirstRound,
  before: number,
): { type: LimiterType; how: string } {
  const back = seen.filter((r) => admitted(r)).length;
  if (back > first.count)
    return {
      type: 'fixed-window',
      how: `at its return ${back} came back at once, more than the ${first.count} of its first round: the whole count comes back together, a fixed window`,
    };
  if (before <= 0)
    return {
      type: 'unknown',
      how: `at its return ${back} came back, counted too late to tell the first round's slots from the next's: fixed or moving unknown`,
    };
  return {
    type: 'sliding-window',
    how: `at its return ${back} came back, no more than its first round's ${first.count}, and the next was refused: its slots come back one by one, each a window after it was admitted, a moving window`,
  };
}

/** Told by the headers: a Reset at the Retry-After is the whole count back then, a later one a slot. */
function toldReturn(refusal: ProbeReply | undefined, told: number): { type: LimiterType; how: string } {
  const reset = refusal?.rateLimit.reset;
  if (reset === undefined) return { type: 'unknown', how: 'its 429 told no reset: fixed or moving unknown' };
  const after = reset * 1000 - told;
  if (Math.abs(after) <= HEADER_GRANULARITY_MS)
    return {
      type: 'fixed-window',
      how: "its 429's reset was its Retry-After: the whole count comes back at once, a fixed window",
    };
  if (after > HEADER_GRANULARITY_MS)
    return {
      type: 'sliding-window',
      how: `its 429's reset came ${tenths(after)} s after its Retry-After: its slots come back one by one, a moving window`,
    };
  return { type: 'unknown', how: "its 429's reset came before its Retry-After: fixed or moving unknown" };
}
