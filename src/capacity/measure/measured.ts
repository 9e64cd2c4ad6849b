import type { Dialect } from '../../api/rate-limit-dialect.ts';
import type { DailyWalk, ModelCheck } from '../../result/capacity-types.ts';
import type { Ramp } from '../discover/concurrency.ts';
import type { Exhausted } from '../discover/exhaust.ts';
import type { Look } from '../discover/look.ts';
import type { SlowDownWatch } from '../discover/slow-down.ts';
import type { Family } from '../model.ts';
import type { Shot } from '../probe-client.ts';
import type { BlockProbe } from './block.ts';
import type { LongerMeasure } from './longer-windows.ts';
import type { PacedPhase } from './paced-window.ts';
import type { SearchState } from './rate-search.ts';
import type { Recovery } from './recovery.ts';

/**
 * What the capacity probe's phases measured, in whichever order they ran (window-first, or the
 * burst from rest first): all the report is assembled from, besides the plan itself.
 */
export interface PhasesMeasured {
  look: Look;
  paced: PacedPhase;
  exhausted: Exhausted;
  exhaustMs: number;
  recovery: Recovery;
  family: Family;
  atOnceFrom: 'remaining' | 'counted';
  search: SearchState | undefined;
  returnRangeMs: { low: number; high: number } | null;
  /** Where the daily walk may begin. */
  dailyAnchor: number;
  /** The answers' times of a burst sent one request at a time (model-first only). */
  slowDown?: SlowDownWatch;
  /** The burst from rest at growing concurrency (none when a window-first probe stalled before it). */
  ramp: Ramp | undefined;
  /** A limiter that queues: the rate was read from its release, not searched. */
  queued?: { queue: number; intervalMs: number; lastReleaseAt: number };
  /** Why the paced windows were not sent (the plan rate cannot be kept at the latency seen). */
  infeasible: string | undefined;
  /** The excess's refusal told a wait longer than the window, within --max-wait: the block probed. */
  block?: BlockProbe;
  /**
   * A limiter that blocks at its first excess and refills one by one: the rate its paced windows
   * were admitted at after the block, and its burst from rest (model-first only).
   */
  underBlock?: { intervalMs: number; burst: number };
  /** A longer window of the plan, spent after the shorter one's return (either order). */
  longer?: LongerMeasure;
}

/** The whole probe: its phases, and what the run as a whole told. */
export interface Measured extends PhasesMeasured {
  /** Why the probe stopped early: a refusal whose wait outlived the window. */
  stalledBy: string | undefined;
  /** Answers per dialect while the limiter was measured (the daily walk's are not counted). */
  dialects: ReadonlyMap<Dialect | 'none', number>;
  /** The dialects that announced a reset, over the same answers. */
  resetDialects: ReadonlySet<Dialect>;
  /** Every answer while the limiter was measured, as written and admitted or not: what its model must predict. */
  answers: readonly Shot[];
  /** The statuses the limiter refused with meanwhile, with how many of each. */
  refusedWith: ReadonlyMap<number, number>;
  /** Every Limit the headers told meanwhile, smallest first. */
  limitsTold: readonly number[];
  /** The paced phase at the inferred model (null: no model to check, or the probe stalled). */
  check?: ModelCheck | null;
  /** `--daily`: the walk, or why it was not walked; undefined when not asked for. */
  daily: { walk: DailyWalk } | { notWalked: string } | undefined;
  /** Requests sent inside a Retry-After (a bug of the probe's). */
  violations: number;
  durationMs: number;
}
