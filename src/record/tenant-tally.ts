import { parseDuration } from '../api/duration.ts';
import { planRate } from '../api/plans.ts';
import { isError, passedLimiter } from '../api/responses.ts';
import type { TenantMix, TenantRef } from '../api/tenants.ts';
import type { AttemptRecord } from './attempt.ts';
import { type Histogram, newHistogram } from './histogram.ts';

/**
 * One tier of a tenant mix while the run goes: a plan's unnamed groups, or one named group. What a
 * TierSummary is built from. Per key it keeps two typed-array slots (admitted, and whether the key
 * sent anything), so 10,000 keys cost 50 KB here, and a request costs the same whatever the keys.
 */
export class TierTally {
  readonly service: Histogram = newHistogram();
  readonly response: Histogram = newHistogram();
  requests = 0;
  /** Requests while the workload ran: the numerator of `rate`. */
  duringWorkload = 0;
  readonly statuses: Record<string, number> = {};
  rateLimited = 0;
  violations = 0;
  /** 5xx and transport errors. */
  errors = 0;
  /** Answered, other than 429, while the workload ran (setup and teardown excluded). */
  admitted = 0;
  /** The same per key, by ordinal - 1. */
  readonly admittedPerKey: Uint32Array;
  keysSeen = 0;
  /** 1 once the key (ordinal - 1) sent a request: keysSeen without a set of labels. */
  private readonly seen: Uint8Array;
  readonly plan: string;
  readonly keys: number;
  /** Pacing on for every group of the tier. */
  readonly enforce: boolean;
  /** Requests per second one key's plan allows (its shortest window, time-scaled). */
  readonly planRatePerKey: number;
  /** When its earliest group starts, seconds after the workload's start. */
  readonly startSeconds;

  constructor(plan: string, keys: number, enforce: boolean, planRatePerKey: number, startSeconds = 0) {
    this.plan = plan;
    this.keys = keys;
    this.enforce = enforce;
    this.planRatePerKey = planRatePerKey;
    this.startSeconds = startSeconds;
    this.admittedPerKey = new Uint32Array(keys);
    this.seen = new Uint8Array(keys);
  }

  add(
    t: TenantRef,
    a: AttemptRecord,
    serviceUs: number,
    responseUs: number,
    violation: boolean,
    measured: boolean,
    admitted: boolean,
  ): void {
    this.requests++;
    this.service.recordValue(serviceUs);
    this.response.recordValue(responseUs);
    if (a.status !== 0) this.statuses[a.status] = (this.statuses[a.status] ?? 0) + 1;
    if (a.kind === 'refused') this.rateLimited++;
    if (isError(a.kind, a.status)) this.errors++;
    if (violation) this.violations++;
    if (measured) this.duringWorkload++;
    const i = t.ordinal - 1;
    if (i >= 0 && i < this.keys && this.seen[i] === 0) {
      this.seen[i] = 1;
      this.keysSeen++;
    }
    if (!admitted) return;
    this.admitted++;
    if (i >= 0 && i < this.keys) this.admittedPerKey[i] = (this.admittedPerKey[i] as number) + 1;
  }
}

/** The compliant tenants of one plan in one stretch of the run (before or after the noisy start). */
export class StretchTally {
  readonly response: Histogram = newHistogram();
  requests = 0;
  rateLimited = 0;
  errors = 0;

  add(a: AttemptRecord, responseUs: number): void {
    this.requests++;
    this.response.recordValue(responseUs);
    if (a.kind === 'refused') this.rateLimited++;
    if (isError(a.kind, a.status)) this.errors++;
  }
}

/** The named raw-mode groups that start late (noisy neighbours), and when the first of them starts. */
export interface NoisyStart {
  groups: string[];
  /** Ms after the workload's start. */
  fromMs: number;
}

/**
 * The noisy neighbours of a mix: named groups with `enforce: false` and a startTime after the
 * workload's start. Undefined when there are none: a run without a quiet stretch has nothing to
 * compare the noisy one with.
 */
export function noisyStart(mix: TenantMix): NoisyStart | undefined {
  const groups: string[] = [];
  let fromMs = Number.POSITIVE_INFINITY;
  for (const g of mix.groups) {
    if (g.spec.name === undefined || g.spec.enforce !== false || g.spec.startTime === undefined) continue;
    const startMs = parseDuration(g.spec.startTime, `tenants group '${g.name}': startTime`);
    if (!(startMs > 0)) continue;
    groups.push(g.name);
    fromMs = Math.min(fromMs, startMs);
  }
  return groups.length > 0 ? { groups, fromMs } : undefined;
}

/**
 * A tenant mix's figures by tier, and the compliant tenants' stretches before and after the noisy
 * neighbour started. An attempt finds its tier through its tenant's group index: an array lookup,
 * never a map of labels that grows with the keys.
 */
export class TenantTally {
  /** By plan: the tenants of its unnamed groups. */
  readonly byPlan = new Map<string, TierTally>();
  /** By name: each named group. */
  readonly byGroup = new Map<string, TierTally>();
  readonly noisy: NoisyStart | undefined;
  /** By plan (unnamed groups only), with a noisy neighbour: sent before / at or after it started. */
  readonly stretches = new Map<string, { before: StretchTally; after: StretchTally }>();
  private readonly tierOfGroup: TierTally[];
  private readonly stretchOfGroup: ({ before: StretchTally; after: StretchTally } | undefined)[];
  /** Epoch ms the noisy neighbour started: set when the workload starts. */
  private noisyFrom = Number.POSITIVE_INFINITY;
  /** Requests per second the mix's keys are allowed together: the run's quota. */
  readonly planRate: number;

  constructor(mix: TenantMix) {
    this.noisy = noisyStart(mix);
    this.planRate = mix.tenants.reduce((sum, t) => sum + planRate(t.tenant.windows), 0);
    const keysOf = new Map<string, number>();
    const enforceOf = new Map<string, boolean>();
    const startOf = new Map<string, number>();
    for (const g of mix.groups) {
      const id = g.spec.name === undefined ? `plan\u0000${g.spec.plan}` : `group\u0000${g.name}`;
      keysOf.set(id, (keysOf.get(id) ?? 0) + g.tenants.length);
      enforceOf.set(id, (enforceOf.get(id) ?? true) && (g.spec.enforce ?? true));
      const start = g.spec.startTime === undefined ? 0 : parseDuration(g.spec.startTime, 'startTime') / 1000;
      startOf.set(id, Math.min(startOf.get(id) ?? Number.POSITIVE_INFINITY, start));
    }
    this.tierOfGroup = mix.groups.map((g) => {
      const named = g.spec.name !== undefined;
      const id = named ? `group\u0000${g.name}` : `plan\u0000${g.spec.plan}`;
      const tiers = named ? this.byGroup : this.byPlan;
      const key = named ? g.name : g.spec.plan;
      let tier = tiers.get(key);
      if (!tier) {
        const windows = g.tenants[0]?.tenant.windows ?? [];
        tier = new TierTally(
          g.spec.plan,
          keysOf.get(id) ?? 0,
          enforceOf.get(id) ?? true,
          planRate(windows),
          startOf.get(id) ?? 0,
        );
        tiers.set(key, tier);
      }
      return tier;
    });
    this.stretchOfGroup = mix.groups.map((g) => {
      if (!this.noisy || g.spec.name !== undefined) return undefined;
      let s = this.stretches.get(g.spec.plan);
      if (!s) {
        s = { before: new StretchTally(), after: new StretchTally() };
        this.stretches.set(g.spec.plan, s);
      }
      return s;
    });
  }

  /** The workload starts at `at` (epoch ms): the noisy neighbour's start counts from here. */
  start(at: number): void {
    if (this.noisy) this.noisyFrom = at + this.noisy.fromMs;
  }

  /** When the noisy neighbour started, epoch ms (Infinity before the workload started or without one). */
  get noisyFromAt(): number {
    return this.noisyFrom;
  }

  /**
   * `measured`: counted in the rate (the workload, or everything for a recorder that measures all);
   * `during`: inside the workload proper (admitted, the isolation stretches).
   */
  add(
    a: AttemptRecord,
    serviceUs: number,
    responseUs: number,
    violation: boolean,
    measured: boolean,
    during: boolean,
  ): void {
    const t = a.tenant;
    if (t === undefined) return;
    const tier = this.tierOfGroup[t.groupIndex];
    if (tier === undefined) return;
    tier.add(t, a, serviceUs, responseUs, violation, measured, during && passedLimiter(a.kind));
    if (!during) return;
    const s = this.stretchOfGroup[t.groupIndex];
    if (s !== undefined) (a.sentAt < this.noisyFrom ? s.before : s.after).add(a, responseUs);
  }
}
