import { appendFlat, lastRecordAtOrBefore } from './flat-lists.ts';
import { openUntilMs, type Quota } from './quota.ts';

export interface FullQuota {
  limit: number;
  remaining: number;
  reset: number;
  slack: number;
}

export function full(q: Quota): FullQuota | undefined {
  return q.limit === undefined || q.remaining === undefined || q.reset === undefined
    ? undefined
    : (q as FullQuota);
}

/**
 * One window of one key as RemainingLog keeps it, flat: [Limit, Reset, open until (epoch ms), then
 * (receive time, lowest Remaining so far) pairs]. Until when every response that showed the window
 * saw it certainly open.
 */
export type WindowLog = number[];
export const W_LIMIT = 0;
export const W_RESET = 1;
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

  private readonly horizonMs: number;

  constructor(horizonMs: number) {
    this.horizonMs = horizonMs;
  }

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
