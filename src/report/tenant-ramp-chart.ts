import type { TenantCapacity } from '../result/capacity-types.ts';

/** `capacity --tenants`: the ramp's curve as the page draws it, one point per step, by tenants. */
export interface TenantRampChart {
  id: string;
  kind: 'tenant-ramp';
  /** Tenants of each step, ascending (the x axis, base-2 log: the ramp doubles). */
  tenants: number[];
  series: {
    p50: number[];
    p99: number[];
    /** Requests per second the step got, and the rate its tenants' quotas allowed. */
    rate: number[];
    offered: number[];
    /** p99 of the steps that broke (null for those that held): drawn as marks. */
    broke: (number | null)[];
  };
  /** A `p99<N` step threshold's N in ms, drawn as a line (null: none such). */
  p99Limit: number | null;
}

export const TENANT_RAMP_CHART = 'tenant-ramp';

/** `p99<300ms`, `p(99)<=0.3s`: the bound the p99 curve is judged against, in ms. */
export function p99Limit(thresholds: readonly string[]): number | null {
  for (const t of thresholds) {
    const m = /^p\(?99\)?\s*<=?\s*([\d.]+)\s*(ms|s)?$/.exec(t.trim());
    if (m) return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  }
  return null;
}

export function tenantRampChart(c: TenantCapacity): TenantRampChart {
  const steps = [...c.steps].sort((a, b) => a.tenants - b.tenants);
  return {
    id: TENANT_RAMP_CHART,
    kind: 'tenant-ramp',
    tenants: steps.map((s) => s.tenants),
    series: {
      p50: steps.map((s) => s.p50Ms),
      p99: steps.map((s) => s.p99Ms),
      rate: steps.map((s) => s.rate),
      offered: steps.map((s) => s.offeredRate),
      broke: steps.map((s) => (s.held ? null : s.p99Ms)),
    },
    p99Limit: p99Limit(c.thresholds),
  };
}
