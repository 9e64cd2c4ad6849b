import {
  busiestTimelines,
  type OperationTimelinePoint,
  operationPoint,
} from '../record/operation-timelines.ts';
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

export interface OperationTimelinesPart {
  operationTimelines: Record<string, OperationTimelinePoint[]> | undefined;
  start: number;
}

/**
 * Each operation's seconds on one clock, as `mergeTimelines` merges the run's (p50 and p99 just as
 * approximate), and the busiest kept. An operation a part did not keep (not among its busiest) is
 * merged from the parts that kept it. Absent when no part kept any (results of older versions).
 */
export function mergeOperationTimelines(
  parts: OperationTimelinesPart[],
  start: number,
): Record<string, OperationTimelinePoint[]> | undefined {
  // A part written before results kept them would leave its seconds out of a chart of the whole load.
  if (parts.some((p) => p.operationTimelines === undefined)) return undefined;
  const ids = new Set(parts.flatMap((p) => Object.keys(p.operationTimelines ?? {})));
  if (ids.size === 0) return undefined;
  const merged = [...ids].map((id): [string, OperationTimelinePoint[]] => {
    const own = parts.flatMap((p) => {
      const points =
        p.operationTimelines && Object.hasOwn(p.operationTimelines, id)
          ? p.operationTimelines[id]
          : undefined;
      return points ? [{ start: p.start, timeline: points.map((o) => ({ ...emptyPoint(o.t), ...o })) }] : [];
    });
    return [id, mergeTimelines(own, start).map(operationPoint)];
  });
  return busiestTimelines(merged);
}
