import { PACING_CAUSES, type PacingCause } from '../api/pacing-causes.ts';
import type { RateWindow } from '../api/plans.ts';
import type { OperationStats, Recorder } from '../record/recorder.ts';
import type { TierTally } from '../record/tenant-tally.ts';
import { FAMILIES } from './families.ts';
import { add, addHistogram, type Series } from './series.ts';

/** What a run hands the metrics once it starts: its live recorder, and the client's pacing now. */
export interface LiveRun {
  recorder: Recorder;
  pacing?(): { cause: string; until: number };
  /** A tenant mix: how many keys each cause holds back now. */
  keys?(): Readonly<Record<PacingCause, number>>;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/**
 * The run's figures as series at a moment, read from the recorder's live state when a push is due:
 * nothing is done per request. Counters are the recorder's own totals, so the last collection after
 * the run equals result.json.
 */
export class RecorderSource {
  /** Each tier's admitted at the previous collection, for its utilisation over the interval. */
  private previous: { at: number; tiers: Map<TierTally, number> };
  /** Admitted so far at each collection, oldest first, as far back as the longest window needs. */
  private readonly history: { at: number; admitted: number }[];
  private readonly longestMs: number;
  /** A window's label: its name, made unique (a plan file may give two windows one name). */
  private readonly windowLabels: string[];
  private readonly live: LiveRun;
  /** The plan's windows as the target counts them (time-scaled). */
  private readonly windows: readonly RateWindow[];

  constructor(live: LiveRun, windows: readonly RateWindow[], startedAt: number) {
    this.live = live;
    this.windows = windows;
    this.previous = { at: startedAt, tiers: new Map() };
    this.history = [{ at: startedAt, admitted: 0 }];
    this.longestMs = Math.max(0, ...windows.map((w) => w.seconds * 1000));
    // Two samples of one series at one time are refused whole: a repeated name gets its position.
    this.windowLabels = windows.map((w, i) =>
      windows.findIndex((o) => o.name === w.name) === i ? w.name : `${w.name}#${i + 1}`,
    );
  }

  collect(at: number): Series[] {
    const recorder = this.live.recorder;
    const out: Series[] = [];
    for (const [operation, stats] of recorder.operations) operationSeries(out, operation, stats);
    add(out, FAMILIES.violations, {}, recorder.violations.count);
    add(out, FAMILIES.admitted, {}, recorder.admittedDuringWorkload);
    this.history.push({ at, admitted: recorder.admittedDuringWorkload });
    // A tenant mix's quota is its keys', per tier below; the run's own plan only paced setup.
    if (!recorder.tenants)
      for (const [i, w] of this.windows.entries())
        add(out, FAMILIES.utilisation, { window: this.windowLabels[i] as string }, this.utilisation(w, at));
    this.prune(at);
    for (const point of lastRemaining(recorder))
      add(out, FAMILIES.remaining, { key_group: point.group }, point.remaining);
    // A tenant mix's own key only runs setup (its pacing would read `ready` all run long): its keys
    // are counted by what holds each back.
    const keys = recorder.tenants ? this.live.keys?.() : undefined;
    const pacing = recorder.tenants ? undefined : this.live.pacing?.();
    for (const cause of PACING_CAUSES) {
      if (keys) add(out, FAMILIES.pacingState, { cause }, keys[cause]);
      else if (pacing) add(out, FAMILIES.pacingState, { cause }, pacing.cause === cause ? 1 : 0);
    }
    const tiers = new Map<TierTally, number>();
    const seconds = (at - this.previous.at) / 1000;
    if (recorder.tenants) {
      for (const [plan, tier] of recorder.tenants.byPlan)
        tierSeries(out, { plan }, tier, this.previous, seconds);
      for (const [group, tier] of recorder.tenants.byGroup)
        tierSeries(out, { plan: tier.plan, group }, tier, this.previous, seconds);
      for (const tier of [...recorder.tenants.byPlan.values(), ...recorder.tenants.byGroup.values()])
        tiers.set(tier, tier.admitted);
    }
    this.previous = { at, tiers };
    return out;
  }

  /**
   * The share of a window's quota admitted over the last window's length (from the latest
   * collection at least that long ago), scaled to the window when that span is longer. A run younger
   * than the window shows what it spent of the window so far (a day's quota 16% spent, not a rate).
   */
  private utilisation(w: RateWindow, at: number): number {
    const windowMs = w.seconds * 1000;
    let from = this.history[0] as { at: number; admitted: number };
    for (const h of this.history) {
      if (h.at > at - windowMs) break;
      from = h;
    }
    const latest = this.history[this.history.length - 1] as { at: number; admitted: number };
    const spanMs = at - from.at;
    if (!(w.limit > 0) || spanMs <= 0) return Number.NaN;
    return ((latest.admitted - from.admitted) / w.limit) * Math.min(1, windowMs / spanMs);
  }

  /** Keeps the latest collection at least the longest window old, and everything after it. */
  private prune(at: number): void {
    while (this.history.length > 2 && (this.history[1] as { at: number }).at <= at - this.longestMs)
      this.history.shift();
  }
}

function operationSeries(out: Series[], operation: string, stats: OperationStats): void {
  const op = { operation };
  // Every class from the first push, so that rate() sees a class's first answers as an increase.
  const byClass: Record<string, number> = Object.fromEntries(STATUS_CLASSES.map((c) => [c, 0]));
  for (const status in stats.statuses) {
    const cls = `${status.slice(0, 1)}xx`;
    byClass[cls] = (byClass[cls] ?? 0) + (stats.statuses[status] ?? 0);
  }
  let transport = 0;
  for (const code in stats.transportErrors) transport += stats.transportErrors[code] ?? 0;
  for (const cls in byClass) add(out, FAMILIES.requests, { ...op, status_class: cls }, byClass[cls] ?? 0);
  add(out, FAMILIES.requests, { ...op, status_class: 'error' }, transport);
  add(out, FAMILIES.rateLimited, op, stats.rateLimited);
  add(out, FAMILIES.retries, op, stats.retries);
  for (const status in stats.statuses)
    if (Number(status) >= 500)
      add(out, FAMILIES.errors, { ...op, kind: status }, stats.statuses[status] ?? 0);
  for (const code in stats.transportErrors)
    add(out, FAMILIES.errors, { ...op, kind: labelSafe(code) }, stats.transportErrors[code] ?? 0);
  add(out, FAMILIES.checkFailures, op, stats.checkFailures);
  add(out, FAMILIES.pacingWait, op, stats.pacingWaitMs / 1000);
  add(out, FAMILIES.backoffWait, op, stats.backoffWaitMs / 1000);
  addHistogram(out, FAMILIES.serviceTime, op, stats.service);
  addHistogram(out, FAMILIES.responseTime, op, stats.response);
}

function tierSeries(
  out: Series[],
  labels: Record<string, string>,
  tier: TierTally,
  previous: { tiers: Map<TierTally, number> },
  seconds: number,
): void {
  add(out, FAMILIES.tierRequests, labels, tier.requests);
  add(out, FAMILIES.tierRateLimited, labels, tier.rateLimited);
  add(out, FAMILIES.tierErrors, labels, tier.errors);
  add(out, FAMILIES.tierViolations, labels, tier.violations);
  add(out, FAMILIES.tierAdmitted, labels, tier.admitted);
  const allowed = tier.planRatePerKey * tier.keys;
  const admitted = tier.admitted - (previous.tiers.get(tier) ?? 0);
  add(out, FAMILIES.tierUtilisation, labels, seconds > 0 && allowed > 0 ? admitted / seconds / allowed : NaN);
  addHistogram(out, FAMILIES.tierResponseTime, labels, tier.response);
}

/**
 * The last Remaining each key group announced. The quota timeline keeps keys by label: a plan's
 * name, or a tier's first key (`pro#1`), which is named by its tier (`pro`); never a key.
 */
function lastRemaining(recorder: Recorder): { group: string; remaining: number }[] {
  // One sample per group and push: the run's own key (`free`, setup's) and a tier's first key
  // (`free#1`) name the same group, and two values of one series at one time are refused whole.
  const found = new Map<string, number>();
  for (const { key, remaining } of recorder.quota.lastRemaining())
    found.set(key.replace(/#\d+$/, ''), remaining);
  return [...found].map(([group, remaining]) => ({ group, remaining }));
}

/** Transport codes come from Node and undici (ECONNRESET, UND_ERR_...): kept to what a code looks like. */
function labelSafe(code: string): string {
  return code.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64) || 'unknown';
}
