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
export function appendFlat(list: number[], ...values: number[]): number[] {
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
export function compactFlat(header: number, list: readonly number[], from: number): number[] {
  const next = new Array<number>(1 + list.length - from);
  next[0] = header;
  for (let i = from; i < list.length; i++) next[1 + i - from] = list[i] as number;
  return next;
}

/**
 * Index of the last record whose first number is `<= t`, in a flat list of records of `stride`
 * numbers after a header of `offset` numbers, sorted by that first number; or -1. The time is a
 * send time and the records' are receive times, so the answer is nearly always among the last few:
 * look back a few records before bisecting.
 */
export function lastRecordAtOrBefore(
  flat: readonly number[],
  t: number,
  offset: number,
  stride: number,
): number {
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
export function listOfLimit(lists: readonly number[][] | undefined, limit: number): number {
  if (lists === undefined) return -1;
  for (let i = 0; i < lists.length; i++) if ((lists[i] as number[])[0] === limit) return i;
  return -1;
}
