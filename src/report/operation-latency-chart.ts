import type { OperationTimelinePoint } from '../record/operation-timelines.ts';
import type { RunResult } from '../result/types.ts';

/** Operations drawn at first on the per-operation latency charts; the others kept are a click away. */
export const OPERATIONS_SHOWN = 5;

export type Percentile = 'p50' | 'p99';

/** One operation's line: its service time percentile per second, null in seconds without its response. */
export interface OperationLine {
  operation: string;
  values: (number | null)[];
  /** The operation's percentile over the whole run (ms), for the legend when no second is pointed at. */
  whole: number;
  /** Drawn at first (the busiest OPERATIONS_SHOWN); the others start hidden behind their legend entry. */
  shown: boolean;
}

/** Per-second latency of the busiest operations, one line each: one chart per percentile. */
export interface OperationLatencyChart {
  id: string;
  kind: 'operation-latency';
  percentile: Percentile;
  t: number[];
  lines: OperationLine[];
}

export const operationLatencyChartId = (percentile: Percentile) => `latency-by-operation:${percentile}`;

/** The operations the charts draw (busiest first), those hidden at first, and those the result did not keep. */
export interface OperationLatencyCoverage {
  drawn: string[];
  hidden: string[];
  notKept: string[];
}

/** The result's own entries only: a foreign document's `__proto__` key is not an operation. */
function kept(result: RunResult): [string, OperationTimelinePoint[]][] {
  const timelines = result.operationTimelines ?? {};
  return Object.keys(timelines)
    .filter((id) => Object.hasOwn(timelines, id) && Object.hasOwn(result.operations, id))
    .map((id) => [id, timelines[id] ?? []]);
}

export function operationLatencyCoverage(result: RunResult): OperationLatencyCoverage {
  const drawn = kept(result).map(([id]) => id);
  return {
    drawn,
    hidden: drawn.slice(OPERATIONS_SHOWN),
    notKept: Object.keys(result.operations).filter((id) => !drawn.includes(id)),
  };
}

export function operationLatencyCharts(result: RunResult): OperationLatencyChart[] {
  const timelines = kept(result);
  const last = timelines.reduce((max, [, points]) => points.reduce((m, p) => Math.max(m, p.t), max), -1);
  const t = Array.from({ length: last + 1 }, (_, i) => i);
  return (['p99', 'p50'] as const).map((percentile) => ({
    id: operationLatencyChartId(percentile),
    kind: 'operation-latency',
    percentile,
    t,
    lines: timelines.map(([operation, points], i) => {
      const byT = new Map(points.map((p) => [p.t, p]));
      return {
        operation,
        // A second without a response of the operation has no percentile: a gap, not a zero.
        values: t.map((s) => {
          const p = byT.get(s);
          return p && p.requests > 0 ? Math.round(p[percentile] * 1000) / 1000 : null;
        }),
        whole: result.operations[operation]?.service[percentile] ?? 0,
        shown: i < OPERATIONS_SHOWN,
      };
    }),
  }));
}
