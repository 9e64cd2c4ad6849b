import type { CapacityReport } from '../result/capacity-types.ts';

/**
 * Headers carry whole seconds, so an announced time may be up to a second later than the truth
 * (never earlier, for a correct server); beyond that, plus scheduling slack, it is wrong.
 */
export const HEADER_GRANULARITY_MS = 1000;
export const SLACK_MS = 100;

/** Pass or fail against the plan, with one line per reason. `notes` are the prober's own caveats. */
export function judge(
  r: CapacityReport,
  probeStepMs: number,
  notes: string[] = [],
): { verdict: 'pass' | 'fail'; reasons: string[] } {
  const reasons = [...notes];
  const L = r.window.limit;
  const tolerance = HEADER_GRANULARITY_MS + Math.max(SLACK_MS, 2 * probeStepMs);
  if (r.rate.acceptedPerMinute === null) reasons.push('no window was measured at the plan rate');
  else if (r.rate.acceptedPerMinute !== L)
    reasons.push(
      `at the plan rate a ${r.window.name} window admitted ${r.rate.acceptedPerMinute}, promised ${L}`,
    );
  if (r.rate.rateLimited > 0) reasons.push(`${r.rate.rateLimited} request(s) answered 429 at the plan rate`);
  if (r.exhaust.first429At === null)
    reasons.push(`no 429 within ${r.exhaust.sent} requests: the limiter admits more than the promised ${L}`);
  else if (r.exhaust.first429At !== r.exhaust.expected429At)
    reasons.push(`first 429 at request ${r.exhaust.first429At}, expected ${r.exhaust.expected429At}`);
  if (r.exhaust.first429At !== null && r.exhaust.retryAfterSeconds === null)
    reasons.push('the 429 carried no Retry-After');
  if (r.recovery.quotaBackAt === null)
    reasons.push(`the quota was not back after ${r.recovery.probes} probes`);
  if (r.recovery.resetErrorMs === null) {
    if (r.recovery.quotaBackAt !== null) reasons.push('no X-RateLimit-Reset to judge');
  } else if (Math.abs(r.recovery.resetErrorMs) > tolerance) {
    reasons.push(
      `the quota came back ${Math.abs(r.recovery.resetErrorMs)} ms ${r.recovery.resetErrorMs > 0 ? 'after' : 'before'} X-RateLimit-Reset announced (tolerance ${tolerance} ms)`,
    );
  }
  if (r.recovery.retryAfterAccuracyMs !== null && r.recovery.retryAfterAccuracyMs > tolerance)
    reasons.push(`the quota came back ${r.recovery.retryAfterAccuracyMs} ms after Retry-After announced`);
  return { verdict: reasons.length === 0 ? 'pass' : 'fail', reasons };
}
