import type { Threshold } from '../report/threshold-parse.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';

/** Figures that only grow during a run: a lower bound on them is met late or never, not failed early. */
const GROWING = new Set(['requests', 'violations', 'dropped_iterations', 'failed_iterations']);

/**
 * Whether a threshold failing on the figures so far is a failure the rest of the run cannot undo,
 * so that abortOnFail may end the run on it: a count past its upper bound is; a count still under
 * its lower bound, or an operation or a tenant tier that sent nothing yet, is not.
 */
export function failsForGood(t: Threshold, verdict: ThresholdResult, soFar: RunResult): boolean {
  if (verdict.passed || verdict.actual === null) return false;
  if (t.operation !== undefined && !soFar.operations[t.operation]?.requests) return false;
  // A tier that has not sent yet (a group with a later startTime) may still meet it.
  if (t.tier !== undefined) {
    const tiers = t.tier.kind === 'plan' ? soFar.byPlan : soFar.byTenantGroup;
    if (!tiers || !Object.hasOwn(tiers, t.tier.name) || !tiers[t.tier.name]?.requests) return false;
  }
  if (GROWING.has(t.metric)) {
    if (t.comparator === '<' || t.comparator === '<=') return true;
    return t.comparator === '==' && verdict.actual > t.value;
  }
  return true;
}
