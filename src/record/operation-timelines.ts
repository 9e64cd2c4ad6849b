import { type Histogram, newHistogram } from './histogram.ts';
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

/**
 * One operation's seconds while the run goes on: four numbers a second in columns (not a point
 * object each), since an API of many operations keeps one of these per operation for the whole run,
 * and one histogram for the second that is filling.
 */
export class OperationTimeline {
  readonly #t: number[] = [];
  readonly #requests: number[] = [];
  readonly #p50: number[] = [];
  readonly #p99: number[] = [];
  readonly #histogram: Histogram = newHistogram();
  readonly #startedAt: number;

  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  /**
   * Responses come in order of arrival, so a new second means the one before is complete. A
   * response received a second late by the clock's rounding (none is expected) counts in the
   * second that is filling.
   */
  add(at: number, serviceUs: number): void {
    const t = Math.max(0, Math.floor((at - this.#startedAt) / 1000));
    const last = this.#t.length - 1;
    if (last < 0 || t > (this.#t[last] as number)) {
      this.fold();
      this.#t.push(t);
      this.#requests.push(0);
      this.#p50.push(0);
      this.#p99.push(0);
    }
    const i = this.#requests.length - 1;
    this.#requests[i] = (this.#requests[i] as number) + 1;
    this.#histogram.recordValue(serviceUs);
  }

  /** The filling second's percentiles, read without ending it. */
  private readLast(): void {
    const last = this.#t.length - 1;
    if (last < 0 || this.#histogram.totalCount === 0) return;
    this.#p50[last] = this.#histogram.getValueAtPercentile(50) / 1000;
    this.#p99[last] = this.#histogram.getValueAtPercentile(99) / 1000;
  }

  private fold(): void {
    this.readLast();
    this.#histogram.reset();
  }

  snapshot(): OperationTimelinePoint[] {
    this.readLast();
    return this.#t.map((t, i) => ({
      t,
      requests: this.#requests[i] as number,
      p50: this.#p50[i] as number,
      p99: this.#p99[i] as number,
    }));
  }
}
