// A tenant mix as a scenario declares it and as a flow sees its tenant: part of the public types
// (src/index.ts), so they import nothing but the plans' window shape.
import type { RateWindow } from './plans.ts';

/**
 * A tenant mix: many API keys on several plans driven in one run, so that a run answers "how many
 * customers on each plan does the service carry, and does one abusive customer hurt the others?".
 * Declared in a scenario (`tenants: [...]`) or given with `--tenants FILE`.
 */
export interface TenantGroupSpec {
  plan: string;
  /** How many keys of this plan (the embedded server mints them); a file names them one by one. */
  keys: number;
  /**
   * Each key's iteration rate: a number per second, or a share of its plan ('100%'). Absent: the
   * workload's rate (a share is of each key's own plan).
   */
  rate?: number | `${number}%`;
  /** false: raw mode for these keys (no pacing, the ban guard stays): an abusive customer. */
  enforce?: boolean;
  /**
   * A named group is kept apart from its plan's tier (`byTenantGroup`), so that an abusive
   * customer's 429s do not count as the plan's.
   */
  name?: string;
  /** When the group starts sending, from the workload's start ('10s'); default at once. */
  startTime?: string | number;
}

/**
 * One tenant as results may name it: never its key. Shared by every attempt of the key (one object,
 * no allocation per request), and by the checks, which follow each key's windows apart.
 */
export interface TenantRef {
  /** 0-based across the whole mix: the order keys are spread over workers and shards. */
  readonly index: number;
  readonly plan: string;
  /** The group's name, or the plan's for an unnamed group. */
  readonly group: string;
  /** True for a named group (reported apart from its plan's tier). */
  readonly named: boolean;
  /** 1-based within the group. */
  readonly ordinal: number;
  /** `pro#3`, `abusive#2`: how results, checks and pacing name the key. */
  readonly label: string;
  /** The plan's windows as the target counts them (time-scaled). */
  readonly windows: readonly RateWindow[];
  readonly enforce: boolean;
  /** Index of its group in the mix. */
  readonly groupIndex: number;
}
