import type { LimiterKind } from '../../api/limiter-kinds.ts';
import { type Check, DEFAULT_SETTLE_AFTER_MS, SKIP } from './check.ts';
import { appendFlat, lastRecordAtOrBefore, listOfLimit } from './flat-lists.ts';
import { openUntilMs, resetLabel } from './quota.ts';
import { full, RemainingLog, W_LIMIT, W_RESET } from './remaining-log.ts';

/*
 * The checks of a key's windows against each other: Remaining never rises, Reset never moves
 * earlier, and the quota shown describes the window closest to exhaustion. How two responses are
 * ordered and a window told apart: stateful.ts.
 */

const SEED_LIMITS = 'seed: Limits, rate limit headers';

export function remainingNeverRisesCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  limiter?: LimiterKind,
  log: RemainingLog = new RemainingLog(settleAfterMs),
): Check {
  // A bucket refills and a sliding log frees its oldest slot between two requests: their Remaining
  // rises by design. Only a window (the seed's reading, and the default) promises it never does.
  const refills = limiter !== undefined && limiter !== 'fixed-window';
  return {
    id: 'ratelimit-remaining-never-rises',
    rule: "Within one window (same Limit and Reset) the quota's Remaining (X-RateLimit-Remaining in the seed's dialect) never rises: a response to a request sent after another response was received shows no more remaining than it",
    source: `${SEED_LIMITS} ("requests left in the current window"); consistency, any algorithm`,
    evaluate: ({ quota, rateLimitView: view, attempt: a }) => {
      const r = full(quota);
      if (!r || refills) return SKIP;
      log.prune(a.keyLabel, a.receivedAt);
      if (a.receivedAt >= openUntilMs(r.reset, r.slack)) return SKIP;
      const window = log.find(a.keyLabel, r.limit, r.reset);
      const lowest = log.lowestBefore(window, a.sentAt, a.receivedAt);
      log.add(a.keyLabel, r, a.receivedAt);
      if (lowest === undefined) return SKIP;
      return r.remaining <= lowest
        ? undefined
        : `Remaining ${r.remaining} > ${lowest} shown earlier in the same window (Limit ${r.limit}, ${resetLabel(r.reset, view)})`;
    },
  };
}

/**
 * Resets a key's responses showed for one Limit, flat: [Limit, then (receive time, Reset, slack,
 * open until) records], rising (a later, lower Reset adds nothing), by receive time.
 */
const S_RESET = 1;
const S_SLACK = 2;
const S_OPEN_UNTIL = 3;
const S_STRIDE = 4;

export function resetStableCheck(): Check {
  /** Per key, its lists by Limit (a key shows one or two). */
  const byKey = new Map<string, number[][]>();
  return {
    id: 'ratelimit-reset-stable',
    rule: "Within one window the quota's Reset (X-RateLimit-Reset in the seed's dialect) does not move earlier: a response to a request sent after another response with the same Limit was received, and answered before that Reset, shows a Reset no more than 1 s earlier, and by the uncertainty of each more when Reset is a delay (that a fixed window keeps one Reset is not asserted: plans do not say their windows are fixed)",
    source: `${SEED_LIMITS} ("Unix timestamp at which the limit resets"); consistency, any algorithm`,
    evaluate: ({ quota, rateLimitView: view, attempt: a }) => {
      const r = full(quota);
      if (!r) return SKIP;
      let lists = byKey.get(a.keyLabel);
      let at = listOfLimit(lists, r.limit);
      if (at < 0) {
        lists = (lists ?? []).concat([[r.limit]]);
        at = lists.length - 1;
        byKey.set(a.keyLabel, lists);
      }
      const list = (lists as number[][])[at] as number[];
      let expired = 0;
      while (
        1 + expired * S_STRIDE < list.length &&
        a.receivedAt >= (list[1 + expired * S_STRIDE + S_OPEN_UNTIL] as number)
      )
        expired++;
      if (expired > 0) list.splice(1, expired * S_STRIDE);
      const i = lastRecordAtOrBefore(list, a.sentAt, 1, S_STRIDE);
      const latest = i < 0 ? undefined : 1 + i * S_STRIDE;
      const lastReset = list.length > 1 ? (list[list.length - S_STRIDE + S_RESET] as number) : undefined;
      const openUntil = openUntilMs(r.reset, r.slack);
      if (a.receivedAt < openUntil && (lastReset === undefined || r.reset > lastReset))
        (lists as number[][])[at] = appendFlat(list, a.receivedAt, r.reset, r.slack, openUntil);
      // Slack is not monotonic in Reset: an entry behind the first still open may have closed.
      if (latest === undefined || a.receivedAt >= (list[latest + S_OPEN_UNTIL] as number)) return SKIP;
      const latestReset = list[latest + S_RESET] as number;
      return r.reset >= latestReset - 1 - (list[latest + S_SLACK] as number) - r.slack
        ? undefined
        : `${resetLabel(r.reset, view)} is ${Math.round(latestReset - r.reset)} s earlier than the ${resetLabel(latestReset, view)} shown before this request was sent (Limit ${r.limit})`;
    },
  };
}

export function describesClosestCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  log: RemainingLog = new RemainingLog(settleAfterMs),
): Check {
  return {
    id: 'ratelimit-describes-closest',
    rule: "The quota's Limit and Remaining (X-RateLimit-* in the seed's dialect) describe the window closest to exhaustion, judged by bounds: Remaining exceeds neither another window's whole limit nor the Remaining last shown for another window still open (the exact choice cannot be seen from one client)",
    source:
      'the reference server\'s documented choice ("for the window closest to running out"); seed: Limits',
    evaluate: ({ quota, rateLimitView: view, attempt: a, windows }) => {
      const { limit, remaining, reset, slack } = quota;
      if (limit === undefined || remaining === undefined) return SKIP;
      let judged = false;
      for (const w of windows) {
        if (w.limit === limit) continue;
        judged = true;
        if (remaining > w.limit)
          return `Remaining ${remaining} (Limit ${limit}) exceeds the ${w.name} window's whole limit ${w.limit}: that window is closer to exhaustion`;
      }
      log.prune(a.keyLabel, a.receivedAt);
      for (const window of log.windows(a.keyLabel)) {
        const otherLimit = window[W_LIMIT] as number;
        if (otherLimit === limit) continue;
        const lowest = log.lowestBefore(window, a.sentAt, a.receivedAt);
        if (lowest === undefined) continue;
        judged = true;
        if (remaining > lowest)
          return `Remaining ${remaining} (Limit ${limit}) exceeds the ${lowest} left in the Limit ${otherLimit} window (${resetLabel(window[W_RESET] as number, view)}) shown before this request was sent`;
      }
      if (reset !== undefined) log.add(a.keyLabel, { limit, remaining, reset, slack }, a.receivedAt);
      return judged ? undefined : SKIP;
    },
  };
}
