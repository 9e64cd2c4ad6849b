import type { KeyQuota, QuotaPoint } from '../record/quota-timeline.ts';
import type { RunResult } from '../result/types.ts';

/** One key's quota over the run, per second, as the page draws it. */
export interface QuotaChart {
  id: string;
  kind: 'quota';
  /** Every second from 0 to the end of the last one with traffic or a pause (its end included). */
  t: number[];
  series: {
    /** The last Remaining announced in each second; null where none was. */
    remaining: (number | null)[];
    /** The lowest one. */
    remainingMin: (number | null)[];
    requests: number[];
    rateLimited: number[];
  };
  /** The highest limit announced: the top of the Remaining axis. */
  limit: number | null;
  /** [from, until] in seconds, clipped to the chart. */
  pauses: [number, number][];
  /** Seconds in which a new window was seen. */
  resets: number[];
}

export const quotaChartId = (key: string) => `quota:${key}`;

/**
 * The x axis ends with the last second that had traffic, or the end of a pause within the run: a
 * pause that outlives the run (a Retry-After of years) is drawn to the run's end, not to its own.
 */
function lastSecond(k: KeyQuota, runSeconds: number): number {
  const traffic = k.points.reduce((max, p) => Math.max(max, p.t + 1), 0);
  const paused = k.pauses.reduce((max, b) => Math.max(max, Math.min(b.until, runSeconds)), 0);
  return Math.ceil(Math.max(traffic, paused));
}

export function quotaChart(k: KeyQuota, runSeconds: number): QuotaChart {
  const empty = k.points.length === 0 && k.pauses.length === 0;
  const end = empty ? -1 : lastSecond(k, runSeconds);
  const byT = new Map(k.points.map((p) => [p.t, p]));
  const seconds: (QuotaPoint | undefined)[] = Array.from({ length: end + 1 }, (_, t) => byT.get(t));
  return {
    id: quotaChartId(k.key),
    kind: 'quota',
    t: seconds.map((_, t) => t),
    series: {
      // A second without an announcement is a gap: nothing was told, and time may have restored quota.
      remaining: seconds.map((p) => p?.remainingLast ?? null),
      remainingMin: seconds.map((p) => p?.remainingMin ?? null),
      requests: seconds.map((p) => p?.requests ?? 0),
      rateLimited: seconds.map((p) => p?.rateLimited ?? 0),
    },
    limit: k.limit ?? null,
    pauses: k.pauses
      .filter((b) => b.from <= end)
      .map((b): [number, number] => [b.from, Math.min(b.until, end)]),
    resets: k.points.filter((p) => p.reset).map((p) => p.t),
  };
}

export function quotaCharts(result: RunResult): QuotaChart[] {
  return (result.quota ?? []).map((k) => quotaChart(k, result.meta.durationSeconds));
}
