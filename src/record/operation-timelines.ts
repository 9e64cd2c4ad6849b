import type { TimelinePoint } from './timeline.ts';

/** One operation's second: its responses and their service time p50 and p99 (ms). */
export interface OperationTimelinePoint {
  t: number;
  requests: number;
  p50: number;
  p99: number;
}

/**
 * Operations whose seconds a result keeps, the busiest first: enough for the report's chart (it
 * draws the top five and can show the rest), and a bound on the result's size whatever the API's
 * number of operations. The seconds themselves are bounded as the run's own timeline is.
 */
export const OPERATION_TIMELINES_KEPT = 10;

const requestsOf = (points: OperationTimelinePoint[]) => points.reduce((n, p) => n + p.requests, 0);

/** The busiest `OPERATION_TIMELINES_KEPT` timelines, by requests (ties by id, so the order is stable). */
export function busiestTimelines(
  timelines: Iterable<[string, OperationTimelinePoint[]]>,
): Record<string, OperationTimelinePoint[]> {
  const ranked = [...timelines]
    .filter(([, points]) => points.length > 0)
    .map(([id, points]) => ({ id, points, requests: requestsOf(points) }))
    .sort((a, b) => b.requests - a.requests || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return Object.fromEntries(ranked.slice(0, OPERATION_TIMELINES_KEPT).map((r) => [r.id, r.points]));
}

export const operationPoint = ({ t, requests, p50, p99 }: TimelinePoint): OperationTimelinePoint => ({
  t,
  requests,
  p50,
  p99,
});
