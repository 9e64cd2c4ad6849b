import { now, sleepUntil } from '../../client/clock.ts';
import type { Exhausted } from '../discover/exhaust.ts';
import { familyWithRefusals, refusedWithinWindow } from '../discover/window-refusals.ts';
import type { Family } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';
import {
  IntervalCandidates,
  rateStageBudgetMs,
  SEARCH_MAX_PROBES,
  SEARCH_MAX_REFUSED,
  type SearchState,
  search,
} from './rate-search.ts';
import { announced, type Recovery } from './recovery.ts';

/** The intervals searched reach this many windows: a limiter slower than that has not come back. */
const MAX_INTERVAL_WINDOWS = 4;
/** The quota's return is awaited for at most this many windows after any announced wait. */
const RETURN_WINDOWS = 3;

export interface ModelReturn {
  recovery: Recovery;
  family: Family;
  atOnceFrom: 'remaining' | 'counted';
  search: SearchState | undefined;
  /** The intervals in agreement when the quota first came back (for a window: its length). */
  returnRangeMs: { low: number; high: number } | null;
}

export interface ModelReturnOptions {
  windowMs: number;
  /** The plan's interval between two requests (window / limit): where the search looks first. */
  planIntervalMs: number;
  stalled: () => boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * After a burst from rest: the quota's return (no sooner than any announced wait; without one, at
 * the times the interval search picks, each refusal waited out for 1.5 times the gap it probed),
 * whether it came back whole (a window) or one request at a time, and for the latter the rate.
 */
export async function probeModelReturn(
  client: ProbeClient,
  exhausted: Exhausted,
  o: ModelReturnOptions,
): Promise<ModelReturn> {
  const headline = announced(exhausted);
  const idle: ModelReturn = {
    recovery: {
      ...headline,
      probes: 0,
      back: undefined,
      atOnce: null,
      remainingAfterTenth: null,
      wholeAgainAt: 0,
      nextIndex: exhausted.sent + 1,
    },
    family: 'unknown',
    atOnceFrom: 'remaining',
    search: undefined,
    returnRangeMs: null,
  };
  if (!exhausted.refusal || exhausted.accepted === 0 || o.signal?.aborted || o.stalled()) return idle;
  const state = newSearch(exhausted, exhausted.sent + 1, o);
  const deadline = Math.max(now(), client.pauseUntil) + RETURN_WINDOWS * o.windowMs;
  const back = await search(client, state, {
    until: (r) => admitted(r),
    deadline,
    stalled: o.stalled,
    signal: o.signal,
  });
  const probes = state.probes;
  const returnRangeMs = state.candidates.range();
  const limit = back?.rateLimit.limit ?? exhausted.accepted;
  const remaining = back?.rateLimit.remaining;
  const atOnceFrom = remaining === undefined ? 'counted' : 'remaining';
  const counted =
    back && remaining === undefined
      ? await countAtOnce(client, state, limit, movingSlots(client, exhausted, back, o.windowMs), o.signal)
      : undefined;
  const atOnce = !back ? null : remaining !== undefined ? remaining + 1 : (counted?.count ?? null);
  const refusedBefore = refusedWithinWindow(client.shots, back, o.windowMs);
  const family = familyWithRefusals(atOnce, limit, refusedBefore);
  if (family === 'spacing') await rateStage(client, state, o);
  return {
    recovery: {
      ...headline,
      probes,
      back,
      atOnce,
      ...(counted?.late ? { atOnceLate: counted.late } : {}),
      remainingAfterTenth: null,
      wholeAgainAt: wholeAgain(back),
      nextIndex: state.nextIndex,
      refusedBefore,
    },
    family,
    atOnceFrom,
    search: family === 'spacing' ? state : undefined,
    returnRangeMs,
  };
}

/**
 * The rate of a limiter found to refill continuously only after its window-like headers had it
 * probed as a window: the search replays every request since the burst.
 */
export async function searchRateAfter(
  client: ProbeClient,
  exhausted: Exhausted,
  nextIndex: number,
  o: ModelReturnOptions,
): Promise<SearchState | undefined> {
  if (!exhausted.refusal || exhausted.accepted === 0 || o.stalled()) return undefined;
  const state = newSearch(exhausted, nextIndex, o);
  await rateStage(client, state, o);
  return state;
}

function newSearch(exhausted: Exhausted, nextIndex: number, o: ModelReturnOptions): SearchState {
  return {
    candidates: new IntervalCandidates(MAX_INTERVAL_WINDOWS * o.windowMs, exhausted.accepted),
    planIntervalMs: o.planIntervalMs,
    probes: 0,
    refused: 0,
    startedAt: now(),
    endedAt: now(),
    nextIndex,
  };
}

/** Until the intervals left agree to 1.5%, or the requests, refusals or time allowed run out. */
async function rateStage(client: ProbeClient, state: SearchState, o: ModelReturnOptions): Promise<void> {
  if (o.signal?.aborted) return;
  o.log?.(
    `the quota comes back one request at a time: searching the sustained rate, at most ${SEARCH_MAX_PROBES - state.probes} more requests (at most ${SEARCH_MAX_REFUSED - state.refused} of them refused) and ${Math.round(rateStageBudgetMs(o.planIntervalMs) / 1000)} s`,
  );
  await search(client, state, {
    deadline: now() + rateStageBudgetMs(o.planIntervalMs),
    stalled: o.stalled,
    signal: o.signal,
  });
}

const wholeAgain = (r: ProbeReply | undefined) =>
  r?.rateLimit.reset === undefined ? 0 : r.rateLimit.reset * 1000;

/**
 * With no Remaining to tell it, how much came back is counted: requests back to back after the
 * first admitted one, until one is refused or the whole burst is back (a window refills at once, a
 * bucket one request at a time: the second is refused). A moving window gives each slot back a
 * window after the burst's request that held it: where the burst was spread (a busy machine, a slow
 * first answer) and the first came back only a window after the burst began, a refusal sent before
 * its slot's time is asked again then (late), once; a bucket's first comes back far sooner.
 */
async function countAtOnce(
  client: ProbeClient,
  state: SearchState,
  limit: number,
  slots: MovingSlots,
  signal?: AbortSignal,
): Promise<{ count: number; late: number }> {
  let count = 1;
  let late = 0;
  while (count < limit && !signal?.aborted) {
    let r = await client.request(state.nextIndex++);
    state.endedAt = now();
    const slotAt = admitted(r) ? undefined : slots.returnOf(count, r.sentAt, client.pauseUntil);
    if (slotAt !== undefined) {
      state.refused++;
      await sleepUntil(slotAt, signal);
      r = await client.request(state.nextIndex++);
      state.endedAt = now();
      if (admitted(r)) late++;
    }
    if (!admitted(r)) {
      state.refused++;
      break;
    }
    count++;
  }
  return { count, late };
}

/** The burst's admitted requests in the order they were answered, and when each one's slot comes back. */
interface MovingSlots {
  /** When slot `k` (0: the burst's first) is back, if a request sent at `sentAt` may have come before it. */
  returnOf(k: number, sentAt: number, pauseUntil: number): number | undefined;
}

function movingSlots(
  client: ProbeClient,
  exhausted: Exhausted,
  back: ProbeReply,
  windowMs: number,
): MovingSlots {
  const from = exhausted.startedAt ?? back.sentAt;
  const burst = client.history
    .filter((s) => s.admitted && s.at >= from && s.at < back.sentAt)
    .sort((a, b) => (a.answeredAt ?? a.at) - (b.answeredAt ?? b.at));
  const first = burst[0];
  // Only a return no sooner than a window after the burst's first request can be a moving window's.
  const moving = first !== undefined && back.receivedAt >= first.at + windowMs;
  return {
    returnOf(k, sentAt, pauseUntil) {
      const slot = burst[k];
      if (!moving || !slot) return undefined;
      const at = (slot.answeredAt ?? slot.at) + windowMs + SLOT_GUARD_MS;
      // Sent after the slot was surely back, or told to wait longer than a window: not the slot's.
      if (sentAt >= at || pauseUntil - now() > windowMs || at - now() > windowMs) return undefined;
      return at;
    },
  };
}

/** Past a slot's return, for the limiter's clock and ours to agree that it has come back. */
const SLOT_GUARD_MS = 5;
