import type { LimiterKind } from '../../api/limiter-kinds.ts';
import type { Dialect } from '../../api/rate-limit-dialect.ts';
import { parseRetryAfter } from '../../api/retry-after.ts';
import type { AttemptRecord } from '../attempt.ts';
import { type Check, type SettledOutcome, SKIP } from './check.ts';
import { openUntilMs, type Quota, remainingField, resetLabel } from './quota.ts';

/*
 * Checks that compare responses with each other. Responses arrive out of order (8 virtual users
 * have 8 requests in flight), so two responses are compared only when their order at the server is
 * certain: A was processed before B if A was received before B was sent. Everything is judged from
 * the server's own numbers (its quota fields in whatever dialect, Retry-After) and the client's send
 * and receive times; nothing assumes the server's algorithm. A window is identified by its Limit and
 * Reset, and a response B is "in A's window" only when B was answered at least one second before
 * A's Reset (the header is whole seconds rounded up, so the true reset may be up to a second
 * earlier), and by A's slack more when A's Reset was a delay (quota.ts).
 */

const SEED_LIMITS = 'seed: Limits, rate limit headers';

/** Verdicts that need every request sent before a response to be answered wait this long (ms). */
export const DEFAULT_SETTLE_AFTER_MS = 15_000;

interface FullQuota {
  limit: number;
  remaining: number;
  reset: number;
  slack: number;
}

function full(q: Quota): FullQuota | undefined {
  return q.limit === undefined || q.remaining === undefined || q.reset === undefined
    ? undefined
    : (q as FullQuota);
}

/**
 * Index of the last element with `at <= t` in a list sorted by `at`, or -1. `t` is a send time and
 * the list holds receive times, so the answer is nearly always among the last few (only responses
 * in flight at that send come after it): look back a few steps before bisecting.
 */
function lastAtOrBefore(list: readonly { at: number }[], t: number): number {
  let hi = list.length - 1;
  for (let steps = 0; steps < 16 && hi >= 0; steps++, hi--) {
    if ((list[hi] as { at: number }).at <= t) return hi;
  }
  let lo = 0;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as { at: number }).at <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

// Module-level factories for getOrAdd: no closure is allocated per call on the hot path.
function newMap<K, V>(): Map<K, V> {
  return new Map<K, V>();
}
function newList<T>(): T[] {
  return [];
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => NoInfer<V>): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** One step of a running minimum: from receive time `at` on, the lowest Remaining seen is `min`. */
interface Step {
  at: number;
  min: number;
}

/** One window's running minimum, and until when every response that showed it saw it certainly open. */
interface WindowLog {
  steps: Step[];
  openUntil: number;
}

/**
 * Per key, Limit and Reset (one window as the server names it): the lowest Remaining shown so far,
 * as a function of receive time. Only steps down are stored, and only those a response still on
 * its way can be compared with: queries ask "before this request was sent", and no request still
 * unanswered was sent more than `horizonMs` ago (the timeout, and some). Older steps fold into the
 * latest of them, so that a window of a million requests a day does not keep a million steps.
 */
class RemainingLog {
  private readonly keys = new Map<string, Map<number, Map<number, WindowLog>>>();
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly horizonMs: number) {}

  /** Forgets windows whose Reset has come, and folds steps older than the horizon into one. */
  prune(nowMs: number): void {
    if (nowMs - this.prunedAt < 100) return;
    this.prunedAt = nowMs;
    const horizon = nowMs - this.horizonMs;
    for (const limits of this.keys.values())
      for (const resets of limits.values())
        for (const [reset, window] of resets) {
          if (nowMs >= window.openUntil) {
            resets.delete(reset);
            continue;
          }
          // The last step at or before the horizon answers every query that can still come.
          const keep = lastAtOrBefore(window.steps, horizon);
          if (keep > 0) window.steps.splice(0, keep);
        }
  }

  add(key: string, r: FullQuota, atMs: number): void {
    const openUntil = openUntilMs(r.reset, r.slack);
    if (atMs >= openUntil) return;
    const resets = getOrAdd(getOrAdd(this.keys, key, newMap), r.limit, newMap);
    let window = resets.get(r.reset);
    if (window === undefined) {
      window = { steps: [], openUntil };
      resets.set(r.reset, window);
    } else if (openUntil < window.openUntil) {
      // Responses that named the window less precisely (a delay over a slower round trip) narrow it.
      window.openUntil = openUntil;
    }
    const last = window.steps[window.steps.length - 1];
    if (!last || r.remaining < last.min) window.steps.push({ at: atMs, min: r.remaining });
  }

  /** The lowest Remaining of that window among responses received at or before `t`, if it is open at `atMs`. */
  lowestBefore(window: WindowLog | undefined, t: number, atMs: number): number | undefined {
    if (!window || atMs >= window.openUntil) return undefined;
    const i = lastAtOrBefore(window.steps, t);
    return i < 0 ? undefined : (window.steps[i] as Step).min;
  }

  windows(key: string): Map<number, Map<number, WindowLog>> | undefined {
    return this.keys.get(key);
  }
}

export function remainingNeverRisesCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  limiter?: LimiterKind,
): Check {
  const log = new RemainingLog(settleAfterMs);
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
      log.prune(a.receivedAt);
      if (a.receivedAt >= openUntilMs(r.reset, r.slack)) return SKIP;
      const window = log.windows(a.keyLabel)?.get(r.limit)?.get(r.reset);
      const lowest = log.lowestBefore(window, a.sentAt, a.receivedAt);
      log.add(a.keyLabel, r, a.receivedAt);
      if (lowest === undefined) return SKIP;
      return r.remaining <= lowest
        ? undefined
        : `Remaining ${r.remaining} > ${lowest} shown earlier in the same window (Limit ${r.limit}, ${resetLabel(r.reset, view)})`;
    },
  };
}

/** A Reset a response showed: when it was received, and until when its window was certainly open. */
interface Shown {
  at: number;
  reset: number;
  slack: number;
  openUntil: number;
}

export function resetStableCheck(): Check {
  /** Per key and Limit: Resets shown, rising (a later, lower one adds nothing), by receive time. */
  const byKey = new Map<string, Map<number, Shown[]>>();
  return {
    id: 'ratelimit-reset-stable',
    rule: "Within one window the quota's Reset (X-RateLimit-Reset in the seed's dialect) does not move earlier: a response to a request sent after another response with the same Limit was received, and answered before that Reset, shows a Reset no more than 1 s earlier, and by the uncertainty of each more when Reset is a delay (that a fixed window keeps one Reset is not asserted: plans do not say their windows are fixed)",
    source: `${SEED_LIMITS} ("Unix timestamp at which the limit resets"); consistency, any algorithm`,
    evaluate: ({ quota, rateLimitView: view, attempt: a }) => {
      const r = full(quota);
      if (!r) return SKIP;
      const list = getOrAdd(getOrAdd(byKey, a.keyLabel, newMap), r.limit, newList);
      let expired = 0;
      while (expired < list.length && a.receivedAt >= (list[expired] as Shown).openUntil) expired++;
      if (expired > 0) list.splice(0, expired);
      const i = lastAtOrBefore(list, a.sentAt);
      const latest = i < 0 ? undefined : (list[i] as Shown);
      const last = list[list.length - 1];
      const openUntil = openUntilMs(r.reset, r.slack);
      if (a.receivedAt < openUntil && (!last || r.reset > last.reset))
        list.push({ at: a.receivedAt, reset: r.reset, slack: r.slack, openUntil });
      // Slack is not monotonic in Reset: an entry behind the first still open may have closed.
      if (latest === undefined || a.receivedAt >= latest.openUntil) return SKIP;
      return r.reset >= latest.reset - 1 - latest.slack - r.slack
        ? undefined
        : `${resetLabel(r.reset, view)} is ${Math.round(latest.reset - r.reset)} s earlier than the ${resetLabel(latest.reset, view)} shown before this request was sent (Limit ${r.limit})`;
    },
  };
}

export function describesClosestCheck(settleAfterMs = DEFAULT_SETTLE_AFTER_MS): Check {
  const log = new RemainingLog(settleAfterMs);
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
      log.prune(a.receivedAt);
      for (const [otherLimit, resets] of log.windows(a.keyLabel) ?? []) {
        if (otherLimit === limit) continue;
        for (const [otherReset, window] of resets) {
          const lowest = log.lowestBefore(window, a.sentAt, a.receivedAt);
          if (lowest === undefined) continue;
          judged = true;
          if (remaining > lowest)
            return `Remaining ${remaining} (Limit ${limit}) exceeds the ${lowest} left in the Limit ${otherLimit} window (${resetLabel(otherReset, view)}) shown before this request was sent`;
        }
      }
      if (reset !== undefined) log.add(a.keyLabel, { limit, remaining, reset, slack }, a.receivedAt);
      return judged ? undefined : SKIP;
    },
  };
}

/** Every attempt of each key (transport errors included), by receive time, for counting what was in between. */
class AttemptHistory {
  private readonly keys = new Map<string, { entries: AttemptRecord[]; prunedBefore: number }>();
  constructor(private readonly maxEntries = 20_000) {}

  add(a: AttemptRecord): void {
    let h = this.keys.get(a.keyLabel);
    if (h === undefined) {
      h = { entries: [], prunedBefore: Number.NEGATIVE_INFINITY };
      this.keys.set(a.keyLabel, h);
    }
    h.entries.push(a);
    if (h.entries.length > this.maxEntries) {
      const removed = h.entries.splice(0, this.maxEntries / 4);
      h.prunedBefore = (removed[removed.length - 1] as AttemptRecord).receivedAt;
    }
  }

  /**
   * How many attempts other than `exclude` were received after `after` and sent before `before`
   * (each could have been processed by the server in between), counting up to `stopAt`; undefined
   * when the history no longer reaches back to `after`.
   */
  countBetween(
    key: string,
    after: number,
    before: number,
    exclude: readonly AttemptRecord[],
    stopAt: number,
    horizonMs: number,
  ): number | undefined {
    const h = this.keys.get(key);
    if (!h) return 0;
    if (after < h.prunedBefore) return undefined;
    const { entries } = h;
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((entries[mid] as AttemptRecord).receivedAt <= after) lo = mid + 1;
      else hi = mid;
    }
    let count = 0;
    for (let i = lo; i < entries.length && count < stopAt; i++) {
      const e = entries[i] as AttemptRecord;
      // Nothing sent before `before` is answered later than the client's timeout after it.
      if (e.receivedAt > before + horizonMs) break;
      if (e.sentAt < before && !exclude.includes(e)) count++;
    }
    return count;
  }
}

interface Witness {
  attempt: AttemptRecord;
  remaining: number;
  reset: number;
  slack: number;
  openUntil: number;
}

export function only429WhenSpentCheck(settleAfterMs = DEFAULT_SETTLE_AFTER_MS): Check {
  const history = new AttemptHistory();
  /** Per key and Limit: the latest responses that showed quota left. */
  const recent = new Map<string, Map<number, Witness[]>>();
  const pending: { b: AttemptRecord; limit: number; witnesses: Witness[]; dialect: Dialect | 'none' }[] = [];
  return {
    id: 'ratelimit-429-only-when-spent',
    rule: "A 429 comes only when the quota it names is spent: its Remaining is 0, and no earlier response in the same window showed more remaining than the requests that could have been answered in between (this run's requests: a key shared with other clients at the same time is not seen)",
    source: 'seed: Limits ("When the limit is exceeded, the response is 429") and Errors (429)',
    observe: (a) => history.add(a),
    evaluate: ({ quota, rateLimitView: view, attempt: b, status }) => {
      const { limit, remaining, reset, slack } = quota;
      if (limit === undefined || remaining === undefined) return SKIP;
      const windows = getOrAdd(recent, b.keyLabel, newMap);
      if (status !== 429) {
        const openUntil = reset === undefined ? 0 : openUntilMs(reset, slack);
        if (remaining > 0 && reset !== undefined && b.receivedAt < openUntil) {
          const list = getOrAdd(windows, limit, newList);
          list.push({ attempt: b, remaining, reset, slack, openUntil });
          if (list.length > 16) list.splice(0, list.length - 8);
        }
        return SKIP;
      }
      if (remaining > 0) return `429 with ${remainingField(view)} ${remaining}`;
      if (reset === undefined) return SKIP;
      const witnesses = (windows.get(limit) ?? [])
        .filter(
          (w) =>
            w.attempt.receivedAt <= b.sentAt &&
            b.receivedAt < w.openUntil &&
            Math.abs(w.reset - reset) <= 1 + w.slack + slack,
        )
        .slice(-4)
        .reverse();
      // Judged once every request that could have been answered in between has been answered.
      if (witnesses.length > 0) pending.push({ b, limit, witnesses, dialect: view.dialect });
      return witnesses.length > 0 ? SKIP : undefined;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { b, limit, witnesses, dialect } = pending[0] as (typeof pending)[number];
        if (!final && b.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        let outcome: string | undefined;
        for (const w of witnesses) {
          const between = history.countBetween(
            b.keyLabel,
            w.attempt.sentAt,
            b.receivedAt,
            [w.attempt, b],
            w.remaining,
            settleAfterMs,
          );
          if (between !== undefined && between < w.remaining) {
            outcome = `429 while the quota remained: ${w.remaining} left ${Math.round(b.sentAt - w.attempt.receivedAt)} ms before this request was sent (Limit ${limit}, ${resetLabel(w.reset, { dialect })}), and at most ${between} other requests answered in between`;
            break;
          }
        }
        settled.push({ attempt: b, outcome });
      }
      return settled;
    },
  };
}

interface Predecessor {
  attempt: AttemptRecord;
  /** For a 429 with a valid Retry-After: from when the retry may be sent (client clock). */
  retryFrom?: number;
  /** ... and the earliest moment the server can have meant (its clock read before it answered). */
  quotaBackAfter?: number;
}

export function retrySucceedsCheck(settleAfterMs = DEFAULT_SETTLE_AFTER_MS): Check {
  const history = new AttemptHistory();
  /** Attempts followed by a retry, per key, operation and attempt number, oldest first. */
  const predecessors = new Map<string, Predecessor[]>();
  /** The 429 each retry follows, found when the retry is observed. */
  const matched = new WeakMap<AttemptRecord, Predecessor>();
  const pending: { p: Predecessor; r: AttemptRecord }[] = [];
  const slot = (a: AttemptRecord, attempt: number) => `${a.keyLabel}\u0000${a.operation.id}\u0000${attempt}`;
  return {
    id: 'retry-after-retry-succeeds',
    rule: "The retry sent once a 429's Retry-After has elapsed is not refused again when no other request of the key could have been answered since the quota came back",
    source: 'seed: Errors (429: "retries after the time in the Retry-After header"); RFC 9110 section 10.2.3',
    observe: (a) => {
      history.add(a);
      if (a.attempt > 1) {
        const list = predecessors.get(slot(a, a.attempt - 1));
        const i = list ? list.findIndex((p) => p.attempt.receivedAt <= a.sentAt) : -1;
        if (list && i >= 0) {
          const [p] = list.splice(i, 1) as [Predecessor];
          // Two calls of the operation failed at this attempt, one of them not with a 429: which one
          // this retry follows is not known.
          const ambiguous = list.some(
            (q) =>
              q.attempt.receivedAt <= a.sentAt && (q.retryFrom === undefined) !== (p.retryFrom === undefined),
          );
          if (!ambiguous && p.retryFrom !== undefined) matched.set(a, p);
          if (list.length === 0) predecessors.delete(slot(a, a.attempt - 1));
        }
      }
      if (!a.retried) return;
      const p: Predecessor = { attempt: a };
      const retryAfter = a.status === 429 ? parseRetryAfter(a.headers?.['retry-after']) : undefined;
      if (retryAfter?.form === 'seconds') {
        p.retryFrom = a.receivedAt + retryAfter.seconds * 1000;
        p.quotaBackAfter = a.sentAt + (retryAfter.seconds - 1) * 1000;
      } else if (retryAfter?.form === 'date') {
        p.retryFrom = Math.max(a.receivedAt, retryAfter.date.getTime());
        p.quotaBackAfter = a.sentAt;
      }
      getOrAdd(predecessors, slot(a, a.attempt), newList).push(p);
    },
    evaluate: ({ attempt: r, status }) => {
      const p = matched.get(r);
      if (!p || p.retryFrom === undefined || r.sentAt < p.retryFrom) return SKIP;
      if (status !== 429) return undefined;
      pending.push({ p, r });
      return SKIP;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { p, r } = pending[0] as (typeof pending)[number];
        if (!final && r.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        const others = history.countBetween(
          r.keyLabel,
          p.quotaBackAfter ?? p.attempt.sentAt,
          r.receivedAt,
          [p.attempt, r],
          1,
          settleAfterMs,
        );
        // Another request may have taken the quota that came back: no verdict.
        if (others !== 0) continue;
        const waited = ((r.sentAt - p.attempt.receivedAt) / 1000).toFixed(2);
        settled.push({
          attempt: r,
          outcome: `the retry sent ${waited} s after a 429 (Retry-After ${String(p.attempt.headers?.['retry-after'])}) was refused again, with no other request in between`,
        });
      }
      return settled;
    },
  };
}

/** The response checks that keep state, fresh for one run, in report order. */
export function statefulChecks(settleAfterMs = DEFAULT_SETTLE_AFTER_MS, limiter?: LimiterKind): Check[] {
  return [
    remainingNeverRisesCheck(settleAfterMs, limiter),
    resetStableCheck(),
    describesClosestCheck(settleAfterMs),
    only429WhenSpentCheck(settleAfterMs),
    retrySucceedsCheck(settleAfterMs),
  ];
}
