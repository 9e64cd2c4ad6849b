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

/*
 * Per-key state is what 10,000 tenants multiply, so the checks keep it as flat lists of numbers
 * (one JavaScript array of unboxed doubles per key and Limit, a header then fixed-size records)
 * rather than an object per entry: an object costs a header and a boxed number per field, several
 * times its 8 bytes a number. A list pushed to also reserves 17 slots or more (about 200 bytes)
 * while holding one or two records: short lists are copied on append into an array of the exact
 * size, and only long ones grow in place.
 */
const EXACT_UP_TO = 32;

/**
 * `list` with `values` appended: a new array of exactly the right size while the list is short,
 * its numbers unboxed (concat of an array argument may box them, 16 bytes each more).
 */
function appendFlat(list: number[], ...values: number[]): number[] {
  if (list.length >= EXACT_UP_TO) {
    for (const v of values) list.push(v);
    return list;
  }
  const next = new Array<number>(list.length + values.length);
  for (let i = 0; i < list.length; i++) next[i] = list[i] as number;
  for (let i = 0; i < values.length; i++) next[list.length + i] = values[i] as number;
  return next;
}

/** `header` then `list` from index `from` on, in an array of exactly that size. */
function compactFlat(header: number, list: readonly number[], from: number): number[] {
  const next = new Array<number>(1 + list.length - from);
  next[0] = header;
  for (let i = from; i < list.length; i++) next[1 + i - from] = list[i] as number;
  return next;
}

/**
 * Per key, the times a check may still ask the history about while verdicts wait: held when a
 * verdict is deferred, released when it is given. Only keys with a verdict waiting have any.
 */
class Holds {
  private readonly keys = new Map<string, number[]>();

  hold(key: string, at: number): void {
    const list = this.keys.get(key);
    if (list === undefined) this.keys.set(key, [at]);
    else list.push(at);
  }

  release(key: string, at: number): void {
    const list = this.keys.get(key);
    const i = list?.indexOf(at) ?? -1;
    if (i < 0) return;
    list?.splice(i, 1);
    if (list?.length === 0) this.keys.delete(key);
  }

  /** The earliest time held for `key` (held at or after `since`: older ones are not waited for). */
  floor(key: string, since = Number.NEGATIVE_INFINITY): number {
    let floor = Number.POSITIVE_INFINITY;
    for (const at of this.keys.get(key) ?? []) if (at >= since && at < floor) floor = at;
    return floor;
  }
}

/**
 * Index of the last record whose first number is `<= t`, in a flat list of records of `stride`
 * numbers after a header of `offset` numbers, sorted by that first number; or -1. The time is a
 * send time and the records' are receive times, so the answer is nearly always among the last few:
 * look back a few records before bisecting.
 */
function lastRecordAtOrBefore(flat: readonly number[], t: number, offset: number, stride: number): number {
  let hi = (flat.length - offset) / stride - 1;
  for (let steps = 0; steps < 16 && hi >= 0; steps++, hi--) {
    if ((flat[offset + stride * hi] as number) <= t) return hi;
  }
  let lo = 0;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((flat[offset + stride * mid] as number) <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** The list of a key whose header (its first number) is `limit`, among the key's lists. */
function listOfLimit(lists: readonly number[][] | undefined, limit: number): number {
  if (lists === undefined) return -1;
  for (let i = 0; i < lists.length; i++) if ((lists[i] as number[])[0] === limit) return i;
  return -1;
}

// Module-level factories for getOrAdd: no closure is allocated per call on the hot path.
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

/**
 * One window of one key as RemainingLog keeps it, flat: [Limit, Reset, open until (epoch ms), then
 * (receive time, lowest Remaining so far) pairs]. Until when every response that showed the window
 * saw it certainly open.
 */
type WindowLog = number[];
const W_LIMIT = 0;
const W_RESET = 1;
const W_OPEN_UNTIL = 2;
const W_STEPS = 3;

/**
 * Per key, Limit and Reset (one window as the server names it): the lowest Remaining shown so far,
 * as a function of receive time. Only steps down are stored, and only those a response still on
 * its way can be compared with: queries ask "before this request was sent", and no request still
 * unanswered was sent more than `horizonMs` ago (the timeout, and some). Older steps fold into the
 * latest of them, so that a window of a million requests a day does not keep a million steps.
 *
 * A key's windows are one short list (a key shows one or two at a time), pruned when the key is
 * next seen: no request walks other keys' windows. Several checks may share one log
 * (statefulChecks does): adding the same response twice changes nothing.
 */
export class RemainingLog {
  private readonly keys = new Map<string, WindowLog[]>();

  constructor(private readonly horizonMs: number) {}

  /** Forgets the key's windows whose Reset has come, and folds steps older than the horizon into one. */
  prune(key: string, nowMs: number): void {
    const list = this.keys.get(key);
    if (list === undefined) return;
    const horizon = nowMs - this.horizonMs;
    for (let i = list.length - 1; i >= 0; i--) {
      const window = list[i] as WindowLog;
      if (nowMs >= (window[W_OPEN_UNTIL] as number)) {
        list.splice(i, 1);
        continue;
      }
      // The last step at or before the horizon answers every query that can still come. Folded
      // a quarter of the steps or more at a time: a key with thousands of steps in its horizon
      // must not move them all on every response.
      const keep = lastRecordAtOrBefore(window, horizon, W_STEPS, 2);
      if (keep > 0 && 8 * keep >= window.length - W_STEPS) window.splice(W_STEPS, 2 * keep);
    }
    if (list.length === 0) this.keys.delete(key);
  }

  add(key: string, r: FullQuota, atMs: number): void {
    const openUntil = openUntilMs(r.reset, r.slack);
    if (atMs >= openUntil) return;
    const list = this.keys.get(key) ?? [];
    const i = this.indexOf(list, r.limit, r.reset);
    if (i < 0) {
      // Grouped by Limit, in the order Limits were first seen: the order a check names them in.
      let at = list.length;
      while (at > 0 && (list[at - 1] as WindowLog)[W_LIMIT] !== r.limit) at--;
      if (at === 0) at = list.length;
      const added: WindowLog = [r.limit, r.reset, openUntil, atMs, r.remaining];
      this.keys.set(key, list.slice(0, at).concat([added], list.slice(at)));
      return;
    }
    const window = list[i] as WindowLog;
    // Responses that named the window less precisely (a delay over a slower round trip) narrow it.
    if (openUntil < (window[W_OPEN_UNTIL] as number)) window[W_OPEN_UNTIL] = openUntil;
    if (window.length === W_STEPS || r.remaining < (window[window.length - 1] as number))
      list[i] = appendFlat(window, atMs, r.remaining);
  }

  private indexOf(list: readonly WindowLog[], limit: number, reset: number): number {
    for (let i = 0; i < list.length; i++) {
      const w = list[i] as WindowLog;
      if (w[W_LIMIT] === limit && w[W_RESET] === reset) return i;
    }
    return -1;
  }

  find(key: string, limit: number, reset: number): WindowLog | undefined {
    const list = this.keys.get(key);
    if (list === undefined) return undefined;
    const i = this.indexOf(list, limit, reset);
    return i < 0 ? undefined : list[i];
  }

  /** The lowest Remaining of that window among responses received at or before `t`, if it is open at `atMs`. */
  lowestBefore(window: WindowLog | undefined, t: number, atMs: number): number | undefined {
    if (!window || atMs >= (window[W_OPEN_UNTIL] as number)) return undefined;
    const i = lastRecordAtOrBefore(window, t, W_STEPS, 2);
    return i < 0 ? undefined : (window[W_STEPS + 2 * i + 1] as number);
  }

  windows(key: string): readonly WindowLog[] {
    return this.keys.get(key) ?? [];
  }
}

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

/** An attempt as the history and the witnesses keep it: its times, not the record (headers, body). */
export interface Sent {
  sentAt: number;
  receivedAt: number;
}

/**
 * Every attempt of each key (transport errors included), by receive time, for counting what was in
 * between: flat (sent, received) pairs, 16 bytes an attempt, so that no response's headers and body
 * stay alive for it. Shared by the checks that count (statefulChecks): an attempt they both observe
 * is added once.
 */
export class AttemptHistory {
  /** Per key, flat: [the receive time before which the history was cut, then (sent, received) pairs]. */
  private readonly keys = new Map<string, number[]>();
  /** The attempt added last: the next check observing it adds nothing. */
  private last: AttemptRecord | undefined;
  /** Per checker: the earliest `after` it may still ask about for a key (see `askFrom`). */
  private readonly floors: ((key: string, nowMs: number) => number)[] = [];
  constructor(private readonly maxEntries = 20_000) {}

  /**
   * A check that counts promises to ask about `key` with no `after` earlier than `floor(key, now)`:
   * attempts received before every such promise are forgotten, so that a key keeps the attempts
   * since its oldest witness, not the whole run (16 bytes an attempt, for each of 10,000 keys).
   */
  askFrom(floor: (key: string, nowMs: number) => number): void {
    this.floors.push(floor);
  }

  add(a: AttemptRecord): void {
    if (a === this.last) return;
    this.last = a;
    const key = a.keyLabel;
    const h = this.keys.get(key);
    if (h === undefined) {
      this.keys.set(key, [Number.NEGATIVE_INFINITY, a.sentAt, a.receivedAt]);
      return;
    }
    let times = appendFlat(h, a.sentAt, a.receivedAt);
    if (times.length > 1 + 2 * this.maxEntries) {
      const removed = this.maxEntries / 4;
      times[0] = times[2 * removed] as number;
      times.splice(1, 2 * removed);
    }
    // Every 8 attempts of the key, what no check can ask about any more goes.
    if (this.floors.length > 0 && ((times.length - 1) / 2) % 8 === 0)
      times = this.forget(key, times, a.receivedAt);
    if (times !== h) this.keys.set(key, times);
  }

  /** How many attempts of `key` the history keeps. */
  kept(key: string): number {
    const times = this.keys.get(key);
    return times === undefined ? 0 : (times.length - 1) / 2;
  }

  private forget(key: string, times: number[], nowMs: number): number[] {
    let floor = Number.POSITIVE_INFINITY;
    for (const f of this.floors) floor = Math.min(floor, f(key, nowMs));
    // Counting starts after `after` (>= floor): an attempt received at or before it is never counted.
    const n = (times.length - 1) / 2;
    let k = 0;
    let hi = n;
    while (k < hi) {
      const mid = (k + hi) >> 1;
      if ((times[2 + 2 * mid] as number) <= floor) k = mid + 1;
      else hi = mid;
    }
    // Half or more at a time, so that an attempt is copied a bounded number of times in all.
    if (k === 0 || 2 * k < n) return times;
    // Asked from earlier after all, the history says it no longer reaches back: no verdict, never a wrong one.
    return compactFlat(Math.max(times[0] as number, times[2 * k] as number), times, 1 + 2 * k);
  }

  /**
   * How many attempts other than those of `exclude` were received after `after` and sent before
   * `before` (each could have been processed by the server in between), counting up to `stopAt`;
   * undefined when the history no longer reaches back to `after`. An excluded attempt is told by
   * its times: of attempts with the very same times, which one is left out changes no count.
   */
  countBetween(
    key: string,
    after: number,
    before: number,
    exclude: readonly Sent[],
    stopAt: number,
    horizonMs: number,
  ): number | undefined {
    const times = this.keys.get(key);
    if (!times) return 0;
    if (after < (times[0] as number)) return undefined;
    const n = (times.length - 1) / 2;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((times[2 + 2 * mid] as number) <= after) lo = mid + 1;
      else hi = mid;
    }
    const left = [...exclude];
    let count = 0;
    for (let i = lo; i < n && count < stopAt; i++) {
      const sentAt = times[1 + 2 * i] as number;
      const receivedAt = times[2 + 2 * i] as number;
      // Nothing sent before `before` is answered later than the client's timeout after it.
      if (receivedAt > before + horizonMs) break;
      if (sentAt >= before) continue;
      const j = left.findIndex((e) => e.sentAt === sentAt && e.receivedAt === receivedAt);
      if (j >= 0) left.splice(j, 1);
      else count++;
    }
    return count;
  }
}

/** A response that showed quota left: what a later 429 of its window is judged against. */
interface Witness extends Sent {
  remaining: number;
  reset: number;
  slack: number;
  openUntil: number;
}

/**
 * Witnesses a key keeps per Limit, flat: [Limit, then (sent, received, Remaining, Reset, slack)
 * records]; the window's end is computed again from Reset and slack, as it was when kept.
 */
const WITNESS_STRIDE = 5;

function witnessAt(list: readonly number[], i: number): Witness {
  const at = 1 + i * WITNESS_STRIDE;
  const reset = list[at + 3] as number;
  const slack = list[at + 4] as number;
  return {
    sentAt: list[at] as number,
    receivedAt: list[at + 1] as number,
    remaining: list[at + 2] as number,
    reset,
    slack,
    openUntil: openUntilMs(reset, slack),
  };
}

/** A witness a later 429 can still pick (see `keptWitnesses`). */
function stillUseful(list: readonly number[], i: number, nowMs: number, settledBefore: number): boolean {
  const at = 1 + i * WITNESS_STRIDE;
  const reset = list[at + 3] as number;
  const slack = list[at + 4] as number;
  // Its window closed: every 429 still to come was received after it.
  if (nowMs >= openUntilMs(reset, slack)) return false;
  if ((list[at + 1] as number) > settledBefore) return true;
  // Received before any 429 still to come was sent: of such witnesses naming the same Reset with
  // the same slack, a 429 that may pick one picks the 4 latest first (it takes the last 4 it may).
  let same = 0;
  for (let j = i + 1; j < (list.length - 1) / WITNESS_STRIDE; j++) {
    const other = 1 + j * WITNESS_STRIDE;
    if (
      (list[other + 1] as number) <= settledBefore &&
      list[other + 3] === reset &&
      list[other + 4] === slack &&
      ++same >= 4
    )
      return false;
  }
  return true;
}

/**
 * A key's witnesses of one Limit with `added` appended, without those no 429 still to come can
 * pick: then, beyond 16, the latest 8. `nowMs`: the receive time of the response being judged
 * (later ones are received no earlier); `settleAfterMs`: no request is answered later than that
 * after it was sent.
 */
function keptWitnesses(
  list: readonly number[],
  added: readonly number[],
  nowMs: number,
  settleAfterMs: number,
): number[] {
  const settledBefore = nowMs - settleAfterMs;
  const n = (list.length - 1) / WITNESS_STRIDE;
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (stillUseful(list, i, nowMs, settledBefore)) keep.push(i);
  const from = keep.length + 1 > 16 ? keep.length + 1 - 8 : 0;
  const next = new Array<number>(1 + (keep.length - from + 1) * WITNESS_STRIDE);
  next[0] = list[0] as number;
  let at = 1;
  for (let k = from; k < keep.length; k++) {
    const src = 1 + (keep[k] as number) * WITNESS_STRIDE;
    for (let f = 0; f < WITNESS_STRIDE; f++) next[at++] = list[src + f] as number;
  }
  for (const v of added) next[at++] = v;
  return next;
}

/**
 * Per key, its lists by Limit (a key shows one or two): the latest responses that showed quota left,
 * kept flat as WITNESS_STRIDE describes.
 */
function witnessStore(settleAfterMs: number) {
  const recent = new Map<string, number[][]>();
  const keep = (b: AttemptRecord, limit: number, w: Omit<Witness, keyof Sent | 'openUntil'>): void => {
    let lists = recent.get(b.keyLabel);
    let at = listOfLimit(lists, limit);
    if (at < 0) {
      lists = (lists ?? []).concat([[limit]]);
      at = lists.length - 1;
      recent.set(b.keyLabel, lists);
    }
    const all = lists as number[][];
    const list = all[at] as number[];
    const added = [b.sentAt, b.receivedAt, w.remaining, w.reset, w.slack];
    // A few are kept as they come, as are more while the oldest may still be picked by any 429 (a
    // busy key's witnesses were all in flight a moment ago); else they are sifted: what no 429 can
    // pick goes. Beyond 16, the latest 8 are kept.
    const sift =
      list.length >= 1 + 6 * WITNESS_STRIDE &&
      !stillUseful(list, 0, b.receivedAt, b.receivedAt - settleAfterMs);
    all[at] =
      sift || list.length >= 1 + 16 * WITNESS_STRIDE
        ? keptWitnesses(list, added, b.receivedAt, settleAfterMs)
        : appendFlat(list, b.sentAt, b.receivedAt, w.remaining, w.reset, w.slack);
  };
  const of = (key: string, limit: number): Witness[] => {
    const lists = recent.get(key);
    const at = listOfLimit(lists, limit);
    if (at < 0) return [];
    const list = (lists as number[][])[at] as number[];
    return Array.from({ length: (list.length - 1) / WITNESS_STRIDE }, (_, i) => witnessAt(list, i));
  };
  /** The earliest send among the key's witnesses: the history must keep what came after it. */
  const earliestSent = (key: string): number => {
    let floor = Number.POSITIVE_INFINITY;
    for (const list of recent.get(key) ?? [])
      for (let i = 1; i < list.length; i += WITNESS_STRIDE) floor = Math.min(floor, list[i] as number);
    return floor;
  };
  return { keep, of, earliestSent };
}

/** The first witness whose quota could not have been spent by the requests answered in between, as a failure. */
function spentVerdict(
  history: AttemptHistory,
  b: AttemptRecord,
  limit: number,
  witnesses: Witness[],
  dialect: Dialect | 'none',
  settleAfterMs: number,
): string | undefined {
  for (const w of witnesses) {
    const between = history.countBetween(
      b.keyLabel,
      w.sentAt,
      b.receivedAt,
      [w, b],
      w.remaining,
      settleAfterMs,
    );
    if (between !== undefined && between < w.remaining)
      return `429 while the quota remained: ${w.remaining} left ${Math.round(b.sentAt - w.receivedAt)} ms before this request was sent (Limit ${limit}, ${resetLabel(w.reset, { dialect })}), and at most ${between} other requests answered in between`;
  }
  return undefined;
}

export function only429WhenSpentCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  history: AttemptHistory = new AttemptHistory(),
): Check {
  const witnesses = witnessStore(settleAfterMs);
  /** 429s waiting for their verdict hold the history back to their witnesses. */
  const holds = new Holds();
  history.askFrom((key, nowMs) => {
    // A response still in flight may become a witness: it was sent at most the horizon ago.
    const floor = Math.min(nowMs - 2 * settleAfterMs, holds.floor(key));
    return Math.min(floor, witnesses.earliestSent(key));
  });
  const pending: {
    b: AttemptRecord;
    limit: number;
    witnesses: Witness[];
    dialect: Dialect | 'none';
    /** The earliest witness's send: held in the history until the verdict. */
    from: number;
  }[] = [];
  return {
    id: 'ratelimit-429-only-when-spent',
    rule: "A 429 comes only when the quota it names is spent: its Remaining is 0, and no earlier response in the same window showed more remaining than the requests that could have been answered in between (this run's requests: a key shared with other clients at the same time is not seen)",
    source: 'seed: Limits ("When the limit is exceeded, the response is 429") and Errors (429)',
    observe: (a) => history.add(a),
    evaluate: ({ quota, rateLimitView: view, attempt: b, status }) => {
      const { limit, remaining, reset, slack } = quota;
      if (limit === undefined || remaining === undefined) return SKIP;
      if (status !== 429) {
        const openUntil = reset === undefined ? 0 : openUntilMs(reset, slack);
        if (remaining > 0 && reset !== undefined && b.receivedAt < openUntil)
          witnesses.keep(b, limit, { remaining, reset, slack });
        return SKIP;
      }
      if (remaining > 0) return `429 with ${remainingField(view)} ${remaining}`;
      if (reset === undefined) return SKIP;
      const picked = witnesses
        .of(b.keyLabel, limit)
        .filter(
          (w) =>
            w.receivedAt <= b.sentAt &&
            b.receivedAt < w.openUntil &&
            Math.abs(w.reset - reset) <= 1 + w.slack + slack,
        )
        .slice(-4)
        .reverse();
      // Judged once every request that could have been answered in between has been answered.
      if (picked.length > 0) {
        const from = Math.min(...picked.map((w) => w.sentAt));
        pending.push({ b, limit, witnesses: picked, dialect: view.dialect, from });
        holds.hold(b.keyLabel, from);
      }
      return picked.length > 0 ? SKIP : undefined;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { b, limit, witnesses, dialect, from } = pending[0] as (typeof pending)[number];
        if (!final && b.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        holds.release(b.keyLabel, from);
        settled.push({
          attempt: b,
          outcome: spentVerdict(history, b, limit, witnesses, dialect, settleAfterMs),
        });
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

/** See retrySucceedsCheck: how long a 429's retry keeps the key's history from being cut. */
const LATE_RETRY_MS = 120_000;

/** A retried attempt, with when its retry may go and when its quota came back, if it was a 429 with a Retry-After. */
function predecessorOf(a: AttemptRecord): Predecessor {
  const p: Predecessor = { attempt: a };
  const retryAfter = a.status === 429 ? parseRetryAfter(a.headers?.['retry-after']) : undefined;
  if (retryAfter?.form === 'seconds') {
    p.retryFrom = a.receivedAt + retryAfter.seconds * 1000;
    p.quotaBackAfter = a.sentAt + (retryAfter.seconds - 1) * 1000;
  } else if (retryAfter?.form === 'date') {
    p.retryFrom = Math.max(a.receivedAt, retryAfter.date.getTime());
    p.quotaBackAfter = a.sentAt;
  }
  return p;
}

/** The retry's failure, when no other request of the key could have taken the quota that came back. */
function refusedAgain(
  history: AttemptHistory,
  p: Predecessor,
  r: AttemptRecord,
  settleAfterMs: number,
): string | undefined {
  const others = history.countBetween(
    r.keyLabel,
    p.quotaBackAfter ?? p.attempt.sentAt,
    r.receivedAt,
    [p.attempt, r],
    1,
    settleAfterMs,
  );
  // Another request may have taken the quota that came back: no verdict.
  if (others !== 0) return undefined;
  const waited = ((r.sentAt - p.attempt.receivedAt) / 1000).toFixed(2);
  return `the retry sent ${waited} s after a 429 (Retry-After ${String(p.attempt.headers?.['retry-after'])}) was refused again, with no other request in between`;
}

export function retrySucceedsCheck(
  settleAfterMs = DEFAULT_SETTLE_AFTER_MS,
  history: AttemptHistory = new AttemptHistory(),
): Check {
  /** Attempts followed by a retry, per key, operation and attempt number, oldest first. */
  const predecessors = new Map<string, Predecessor[]>();
  /** The 429 each retry follows, found when the retry is observed. */
  const matched = new WeakMap<AttemptRecord, Predecessor>();
  const pending: { p: Predecessor; r: AttemptRecord }[] = [];
  const slot = (a: AttemptRecord, attempt: number) => `${a.keyLabel}\u0000${a.operation.id}\u0000${attempt}`;
  /** 429s with a Retry-After, until their retry is judged, hold the history back to when the quota came back. */
  const holds = new Holds();
  // A 429 still to come was sent at most the horizon ago; its quota came back at most 1 s before
  // that. A retry later than LATE_RETRY_MS after its quota came back (one never sent, say) holds
  // nothing: judged after all, it finds the history cut and gets no verdict.
  history.askFrom((key, nowMs) =>
    Math.min(nowMs - 2 * settleAfterMs - 1000, holds.floor(key, nowMs - LATE_RETRY_MS)),
  );
  const judged = (p: Predecessor) => holds.release(p.attempt.keyLabel, p.quotaBackAfter as number);
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
          // A transport error is never evaluated: its 429 has no verdict to wait for.
          if (!ambiguous && p.retryFrom !== undefined && a.status !== 0) matched.set(a, p);
          else if (p.retryFrom !== undefined) judged(p);
          if (list.length === 0) predecessors.delete(slot(a, a.attempt - 1));
        }
      }
      if (!a.retried) return;
      const p = predecessorOf(a);
      if (p.quotaBackAfter !== undefined) holds.hold(a.keyLabel, p.quotaBackAfter);
      getOrAdd(predecessors, slot(a, a.attempt), newList).push(p);
    },
    evaluate: ({ attempt: r, status }) => {
      const p = matched.get(r);
      if (!p || p.retryFrom === undefined) return SKIP;
      if (r.sentAt < p.retryFrom || status !== 429) {
        judged(p);
        return r.sentAt < p.retryFrom ? SKIP : undefined;
      }
      pending.push({ p, r });
      return SKIP;
    },
    settle: (nowMs, final) => {
      const settled: SettledOutcome[] = [];
      while (pending.length > 0) {
        const { p, r } = pending[0] as (typeof pending)[number];
        if (!final && r.receivedAt + settleAfterMs > nowMs) break;
        pending.shift();
        judged(p);
        const outcome = refusedAgain(history, p, r, settleAfterMs);
        if (outcome !== undefined) settled.push({ attempt: r, outcome });
      }
      return settled;
    },
  };
}

/** The response checks that keep state, fresh for one run, in report order. */
export function statefulChecks(settleAfterMs = DEFAULT_SETTLE_AFTER_MS, limiter?: LimiterKind): Check[] {
  // Checks that keep the same per-key record share one: memory per key is what a run of 10,000
  // tenants multiplies (the log gets the same steps from both, the history the same attempts).
  const log = new RemainingLog(settleAfterMs);
  const history = new AttemptHistory();
  return [
    remainingNeverRisesCheck(settleAfterMs, limiter, log),
    resetStableCheck(),
    describesClosestCheck(settleAfterMs, log),
    only429WhenSpentCheck(settleAfterMs, history),
    retrySucceedsCheck(settleAfterMs, history),
  ];
}
