import { isError, type ResponseKind } from '../api/responses.ts';
import { type Histogram, newHistogram } from './histogram.ts';

export interface TimelinePoint {
  /** Seconds since the run started. */
  t: number;
  requests: number;
  ok: number;
  rateLimited: number;
  /** Transport errors and 5xx. */
  errors: number;
  /** Service time percentiles of the second, ms. */
  p50: number;
  p99: number;
  pacingWaitMs: number;
  backoffWaitMs: number;
}

/** A second with nothing in it yet: what a timeline, and a merge of timelines, fill in. */
export function emptyPoint(t: number): TimelinePoint {
  return {
    t,
    requests: 0,
    ok: 0,
    rateLimited: 0,
    errors: 0,
    p50: 0,
    p99: 0,
    pacingWaitMs: 0,
    backoffWaitMs: 0,
  };
}

interface Bucket extends TimelinePoint {
  histogram: Histogram | undefined;
}

/** Per-second counts and latency; a second's histogram is folded into p50/p99 once it is over. */
export class Timeline {
  private readonly buckets = new Map<number, Bucket>();
  private readonly spare: Histogram[] = [];
  private latest = 0;
  private readonly startedAt: number;

  constructor(startedAt: number) {
    this.startedAt = startedAt;
  }

  add(
    at: number,
    status: number,
    kind: ResponseKind,
    serviceUs: number,
    pacingWaitMs: number,
    backoffWaitMs: number,
  ): void {
    const t = Math.max(0, Math.floor((at - this.startedAt) / 1000));
    let b = this.buckets.get(t);
    if (!b) {
      b = { ...emptyPoint(t), histogram: this.spare.pop() ?? newHistogram() };
      this.buckets.set(t, b);
    }
    b.requests++;
    if (status >= 200 && status < 300) b.ok++;
    else if (kind === 'refused') b.rateLimited++;
    else if (isError(kind, status)) b.errors++;
    b.pacingWaitMs += pacingWaitMs;
    b.backoffWaitMs += backoffWaitMs;
    b.histogram?.recordValue(serviceUs);
    if (t > this.latest) {
      // The client records each response as it arrives, so seconds come in order: once a new one
      // starts, the one before is complete and its histogram can go back to the pool.
      const previous = this.buckets.get(this.latest);
      if (previous) this.fold(previous);
      this.latest = t;
    }
  }

  private fold(b: Bucket): void {
    if (!b.histogram) return;
    b.p50 = b.histogram.totalCount ? b.histogram.getValueAtPercentile(50) / 1000 : 0;
    b.p99 = b.histogram.totalCount ? b.histogram.getValueAtPercentile(99) / 1000 : 0;
    b.histogram.reset();
    this.spare.push(b.histogram);
    b.histogram = undefined;
  }

  /**
   * The points so far. The newest second may still be filling (a live snapshot during the run):
   * its percentiles are read without folding it, so that later responses of that second still count.
   */
  snapshot(): TimelinePoint[] {
    for (const b of this.buckets.values()) if (b.t < this.latest) this.fold(b);
    return [...this.buckets.values()]
      .sort((a, b) => a.t - b.t)
      .map(({ histogram, ...point }) => {
        const live = histogram?.totalCount ? histogram : undefined;
        return {
          ...point,
          p50: live ? live.getValueAtPercentile(50) / 1000 : point.p50,
          p99: live ? live.getValueAtPercentile(99) / 1000 : point.p99,
          pacingWaitMs: Math.round(point.pacingWaitMs),
          backoffWaitMs: Math.round(point.backoffWaitMs),
        };
      });
  }
}
