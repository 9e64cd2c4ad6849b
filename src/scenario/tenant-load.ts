import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { planRate } from '../api/plans.ts';
import type { TenantGroup, TenantKey, TenantMix } from '../api/tenants.ts';
import type { Workload } from './define.ts';
import type { Share } from './share.ts';
import { parseRate, resolveWorkload, type WorkloadOverrides } from './workload.ts';

/**
 * What one group of a tenant mix sends: its tenants, when it starts, and its arrival rate. A rate
 * is each key's (a share is of the key's own plan), so a group of 200 Free keys at '100%' arrives
 * at 200 times Free's rate, each key getting its plan's worth.
 */
export interface TenantLoad {
  group: TenantGroup;
  /** This generator's tenants of the group (all of them, unless keys are spread over generators). */
  tenants: readonly TenantKey[];
  /** From the workload's start. */
  startMs: number;
  /** The group's iterations per second at `ms` since the workload's start (0 before it starts). */
  rateAt(ms: number): number;
}

/**
 * Each group's load. A group's own `rate` is constant; otherwise the scenario's open workload (its
 * ramp included) is resolved against the group's plan, so '80%' means 80% of each key's plan.
 * With `share`, this generator takes every tenant whose index falls to it: a key lives in one
 * generator, so its quota stays one without any store between them.
 */
export function tenantLoads(
  mix: TenantMix,
  declared: Workload,
  overrides: WorkloadOverrides,
  kind: 'open' | 'closed',
  share?: Share,
): TenantLoad[] {
  return mix.groups.map((group) => {
    const at = `tenants group '${group.name}'`;
    const startMs =
      group.spec.startTime === undefined ? 0 : parseDuration(group.spec.startTime, `${at}: startTime`);
    const tenants = share
      ? group.tenants.filter((t) => t.tenant.index % share.count === share.index - 1)
      : group.tenants;
    const perKeyPlanRate = planRate([...(group.tenants[0]?.tenant.windows ?? [])]);
    let perKey: (ms: number) => number;
    if (group.spec.rate !== undefined) {
      const rate = parseRate(group.spec.rate, perKeyPlanRate, `${at}: rate`);
      perKey = () => rate;
    } else if (kind === 'open') {
      perKey = resolveWorkload(declared, perKeyPlanRate, overrides).rateAt;
    } else {
      perKey = () => 0;
    }
    const keys = tenants.length;
    return {
      group,
      tenants,
      startMs,
      rateAt: (ms: number) => (ms < startMs ? 0 : perKey(ms) * keys),
    };
  });
}

/**
 * The share of a mix's keys one worker thread takes: its part of this generator's part. Tenant `i`
 * falls to shard `i mod S` and, within it, to worker `(i div S) mod W`, so the shard's keys are
 * spread evenly over its workers and every key has exactly one home.
 */
export function tenantShare(shard: Share | undefined, worker: Share | undefined): Share | undefined {
  if (!worker || worker.count === 1) return shard;
  const s = shard ?? { index: 1, count: 1 };
  return { index: (worker.index - 1) * s.count + s.index, count: s.count * worker.count };
}

/** A closed workload gives each group's tenants virtual users only through the run-wide count. */
export function refuseRatesInClosedModel(mix: TenantMix, kind: 'open' | 'closed'): void {
  if (kind !== 'closed') return;
  const withRate = mix.groups.find((g) => g.spec.rate !== undefined);
  if (withRate)
    throw new InputError(
      `tenants group '${withRate.name}': a rate needs an arrival-rate workload (the scenario's is closed: virtual users)`,
    );
}
