import type { AttemptRecord } from '../attempt.ts';
import { appendFlat, compactFlat } from './flat-lists.ts';

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
  private readonly maxEntries: number;

  constructor(maxEntries = 20_000) {
    this.maxEntries = maxEntries;
  }

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

/**
 * Per key, the times a check may still ask the history about while verdicts wait: held when a
 * verdict is deferred, released when it is given. Only keys with a verdict waiting have any.
 */
export class Holds {
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
