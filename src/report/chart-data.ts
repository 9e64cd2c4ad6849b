import type { TimelinePoint } from '../record/timeline.ts';
import type { RunResult } from '../result/types.ts';
import { type OperationLatencyChart, operationLatencyCharts } from './operation-latency-chart.ts';
import { type PercentileCurve, percentileCurve } from './percentile-curve.ts';
import { type QuotaChart, quotaCharts } from './quota-chart.ts';
import { type TenantRampChart, tenantRampChart } from './tenant-ramp-chart.ts';

/**
 * What the page's script draws, computed in Node so the page only plots: one entry per chart
 * container, matched by its `data-chart` id (a list, not an object keyed by operation id, so an id
 * like `__proto__` from a foreign document cannot meet the prototype chain).
 */
export type ChartData = LatencyChart | TimelineChart | OperationLatencyChart | QuotaChart | TenantRampChart;

export interface LatencyChart extends PercentileCurve {
  id: string;
  kind: 'latency';
}

export interface TimelineChart {
  id: string;
  kind: 'timeline' | 'waits';
  t: number[];
  series: Record<string, (number | null)[]>;
  /** The run's p99 service time (ms): the legend's p99 with no second pointed at. */
  wholeP99?: number;
}

export const OVERALL_LATENCY = 'latency-overall';
export const latencyChartId = (operationId: string) => `latency:${operationId}`;
export const TIMELINE = 'timeline';
export const TIMELINE_WAITS = 'timeline:waits';

/**
 * The recorder only has buckets for seconds with traffic: an idle second (a long backoff) is a zero
 * on the chart, not a line drawn straight across it.
 */
function everySecond(timeline: TimelinePoint[]): (TimelinePoint | undefined)[] {
  if (timeline.length === 0) return [];
  const last = timeline.reduce((max, p) => Math.max(max, p.t), 0);
  const byT = new Map(timeline.map((p) => [p.t, p]));
  return Array.from({ length: last + 1 }, (_, t) => byT.get(t));
}

function timelineCharts(result: RunResult): TimelineChart[] {
  const seconds = everySecond(result.timeline);
  const t = seconds.map((_, i) => i);
  const column = (pick: (p: TimelinePoint) => number) => seconds.map((p) => (p ? pick(p) : 0));
  // Percentiles of a second without responses do not exist: a gap, not a zero latency.
  const latency = (pick: (p: TimelinePoint) => number) =>
    seconds.map((p) => (p && p.requests > 0 ? pick(p) : null));
  return [
    {
      id: TIMELINE,
      kind: 'timeline',
      t,
      wholeP99: result.overall.service.p99,
      series: {
        requests: column((p) => p.requests),
        rateLimited: column((p) => p.rateLimited),
        errors: column((p) => p.errors),
        p99: latency((p) => Math.round(p.p99 * 1000) / 1000),
      },
    },
    {
      id: TIMELINE_WAITS,
      kind: 'waits',
      t,
      series: {
        pacingWaitMs: column((p) => p.pacingWaitMs),
        backoffWaitMs: column((p) => p.backoffWaitMs),
      },
    },
  ];
}

export function chartData(result: RunResult): ChartData[] {
  const latency: LatencyChart[] = [
    { id: OVERALL_LATENCY, kind: 'latency', ...percentileCurve(result.overall.histograms) },
    ...Object.entries(result.operations).map(([id, op]) => ({
      id: latencyChartId(id),
      kind: 'latency' as const,
      ...percentileCurve(op.histograms),
    })),
  ];
  const ramp = result.tenantCapacity ? [tenantRampChart(result.tenantCapacity)] : [];
  return [
    ...latency,
    ...timelineCharts(result),
    ...operationLatencyCharts(result),
    ...quotaCharts(result),
    ...ramp,
  ];
}

/** Points a chart plots (its x values): 0 means the page shows "no data" instead of a canvas. */
export const pointsOf = (chart: ChartData): number =>
  chart.kind === 'latency'
    ? chart.x.length
    : chart.kind === 'tenant-ramp'
      ? chart.tenants.length
      : chart.t.length;
