import { isSpacingLimiter } from '../../api/limiter-kinds.ts';
import { QUOTA_FIELDS } from '../../api/rate-limit-dialect.ts';
import { RESPONSE_RULES } from '../../api/responses.ts';
import type { CapacityReport } from '../../result/capacity-types.ts';
import { slowDownReason } from '../discover/slow-down.ts';
import { HEADER_GRANULARITY_MS, RATE_TOLERANCE, SLACK_MS } from '../model.ts';

/**
 * Pass or fail against the plan, with one line per reason. `notes` are the prober's own caveats.
 * A window is judged on its limit, its first 429 and its reset; a token bucket or a GCRA, whose
 * rule binds between two sends, on its sustained rate instead: the seed promises so many requests
 * a minute, not that they may come all at once, and such a limiter's reset announces a full
 * bucket rather than the next request (Retry-After does that, and is judged).
 */
export function judge(
  r: CapacityReport,
  probeStepMs: number,
  notes: string[] = [],
): { verdict: 'pass' | 'fail'; reasons: string[] } {
  const reasons = [...notes];
  const L = r.window.limit;
  const type = r.limiter.type;
  const spacing = type !== 'unknown' && isSpacingLimiter(type);
  const tolerance = HEADER_GRANULARITY_MS + Math.max(SLACK_MS, 2 * probeStepMs);
  if (r.rate.acceptedPerMinute === null) reasons.push('no window was measured at the plan rate');
  else if (r.rate.acceptedPerMinute !== L)
    reasons.push(
      `at the plan rate a ${r.window.name} window admitted ${r.rate.acceptedPerMinute}, promised ${L}`,
    );
  if (r.rate.rateLimited > 0) reasons.push(`${r.rate.rateLimited} request(s) answered 429 at the plan rate`);
  const slowDown = r.exhaust.first429At === null ? r.limiter.slowDown : null;
  if (slowDown) reasons.push(slowDownReason(slowDown, r.exhaust.sent));
  else if (r.exhaust.first429At === null)
    reasons.push(`no 429 within ${r.exhaust.sent} requests: the limiter admits more than the promised ${L}`);
  else if (!spacing && r.exhaust.first429At !== r.exhaust.expected429At)
    reasons.push(`first 429 at request ${r.exhaust.first429At}, expected ${r.exhaust.expected429At}`);
  const status = r.limiter.refusalStatus ?? RESPONSE_RULES.alwaysRefusal;
  if (status !== RESPONSE_RULES.alwaysRefusal)
    reasons.push(`refuses with ${status}, not ${RESPONSE_RULES.alwaysRefusal} as the seed's contract says`);
  if (r.exhaust.first429At !== null && r.exhaust.retryAfterSeconds === null)
    reasons.push(`the ${status} carried no Retry-After`);
  // No quota was to come back where no rate limit refused (the line above said so), nor from a
  // limiter that delays rather than refuses.
  if (r.recovery.quotaBackAt === null && r.exhaust.first429At !== null && !slowDown)
    reasons.push(`the quota was not back after ${r.recovery.probes} probes`);
  // A sliding counter's reset announces the whole quota two periods out, and its quota comes back
  // gradually: its promise is the paced windows', judged above.
  if (!spacing && type !== 'sliding-counter') reasons.push(...resetReasons(r, tolerance));
  if (r.recovery.retryAfterAccuracyMs !== null && r.recovery.retryAfterAccuracyMs > tolerance)
    reasons.push(`the quota came back ${r.recovery.retryAfterAccuracyMs} ms after Retry-After announced`);
  if (spacing) reasons.push(...rateReasons(r));
  return { verdict: reasons.length === 0 ? 'pass' : 'fail', reasons };
}

function resetReasons(r: CapacityReport, tolerance: number): string[] {
  const dialect = r.limiter.headerDialect;
  const field = QUOTA_FIELDS[dialect === 'none' ? 'seed' : dialect].reset;
  if (r.recovery.resetErrorMs === null)
    return r.recovery.quotaBackAt === null
      ? []
      : [dialect === 'none' ? 'no rate-limit reset announced to judge' : `no ${field} to judge`];
  if (Math.abs(r.recovery.resetErrorMs) <= tolerance) return [];
  return [
    `the quota came back ${Math.abs(r.recovery.resetErrorMs)} ms ${r.recovery.resetErrorMs > 0 ? 'after' : 'before'} ${field} announced (tolerance ${tolerance} ms)`,
  ];
}

function rateReasons(r: CapacityReport): string[] {
  const planIntervalMs = (r.window.seconds * 1000) / r.window.limit;
  const sustained = r.limiter.sustainedPerSecond;
  // Measured without a search (a rate kept after a block): no slower than the plan's, or said so.
  const interval =
    r.limiter.rateSearch?.intervalMs ??
    (sustained ? { low: 1000 / sustained, high: 1000 / sustained } : undefined);
  if (!interval) return ['the sustained rate was not measured'];
  if (interval.low <= planIntervalMs * (1 + RATE_TOLERANCE)) return [];
  const perSecond = Math.round((1000 / interval.low) * 1000) / 1000;
  return [
    `the limiter admits one request per ${Math.round(interval.low)} ms at best (${perSecond}/s), slower than the plan's ${Math.round((r.window.limit / r.window.seconds) * 1000) / 1000}/s`,
  ];
}
