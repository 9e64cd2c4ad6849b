import { emptyPoint, type TimelinePoint } from '../record/timeline.ts';

export interface TimelinePart {
  timeline: TimelinePoint[];
  /** Epoch ms the part's t counts from (its meta.startedAt). */
  start: number;
}

/**
 * Timelines on one clock: a point at t of a part that started at S covers the absolute second
 * S/1000 + t, and lands in the merged second (from `start`) it overlaps most, so parts whose starts
 * differ by a fraction of a second are at most half a second off. Counts and waits of a second add up.
 *
 * A second's p50 and p99 cannot be merged exactly: the points keep two percentiles, not histograms.
 * Both are APPROXIMATE: p50 is the request-weighted mean of the parts' p50s and p99 the largest p99.
 * Each stays within the true one's bounds (the percentile of a mixture lies between its parts'), and
 * p99 errs high, so a merged timeline never hides a slow second. With one part they are exact.
 */
export function mergeTimelines(parts: TimelinePart[], start: number): TimelinePoint[] {
  const seconds = new Map<number, TimelinePoint & { p50Weight: number }>();
  for (const part of parts) {
    const offset = (part.start - start) / 1000;
    for (const point of part.timeline) {
      const t = Math.max(0, Math.round(offset + point.t));
      let m = seconds.get(t);
      if (!m) {
        m = { ...emptyPoint(t), p50Weight: 0 };
        seconds.set(t, m);
      }
      m.requests += point.requests;
      m.ok += point.ok;
      m.rateLimited += point.rateLimited;
      m.errors += point.errors;
      m.pacingWaitMs += point.pacingWaitMs;
      m.backoffWaitMs += point.backoffWaitMs;
      m.p50Weight += point.p50 * point.requests;
      m.p99 = Math.max(m.p99, point.p99);
    }
  }
  return [...seconds.values()]
    .sort((a, b) => a.t - b.t)
    .map(({ p50Weight, ...point }) => ({
      ...point,
      // µs, as the recorder's points are.
      p50: point.requests ? Math.round((p50Weight / point.requests) * 1000) / 1000 : 0,
    }));
}
