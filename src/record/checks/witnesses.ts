import type { AttemptRecord } from '../attempt.ts';
import type { Sent } from './attempt-history.ts';
import { appendFlat, listOfLimit } from './flat-lists.ts';
import { openUntilMs } from './quota.ts';

/** A response that showed quota left: what a later 429 of its window is judged against. */
export interface Witness extends Sent {
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
export function witnessStore(settleAfterMs: number) {
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
