import type { Histogram } from '../record/histogram.ts';
import { BUCKET_LABELS, classicBuckets } from './buckets.ts';
import type { Family } from './families.ts';

/** One sample of one series: the family's name, its own labels, its value (the timestamp is the batch's). */
export interface Series {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** Appends a series of `family` unless it has nothing to say (NaN). */
export function add(out: Series[], family: Family, labels: Record<string, string>, value: number): void {
  if (Number.isNaN(value)) return;
  out.push({ name: family.name, labels, value });
}

/** A histogram family's `_bucket{le}`, `_sum` and `_count` series from an HDR histogram. */
export function addHistogram(
  out: Series[],
  family: Family,
  labels: Record<string, string>,
  h: Histogram,
): void {
  const { cumulative, count, sum } = classicBuckets(h);
  for (let i = 0; i < cumulative.length; i++)
    out.push({
      name: `${family.name}_bucket`,
      labels: { ...labels, le: BUCKET_LABELS[i] as string },
      value: cumulative[i] as number,
    });
  out.push({ name: `${family.name}_sum`, labels, value: sum });
  out.push({ name: `${family.name}_count`, labels, value: count });
}
