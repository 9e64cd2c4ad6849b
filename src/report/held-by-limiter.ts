import type { HeldByLimiterSeen } from '../result/types.ts';

const duration = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
/** Three significant digits, as the summary's table reads. */
const latency = (ms: number) => `${Number(ms.toPrecision(3))} ms`;
const rate = (perSecond: number) =>
  perSecond >= 10 ? String(Math.round(perSecond)) : String(Math.round(perSecond * 10) / 10);

function whatHeld(h: HeldByLimiterSeen): string {
  const queue = h.intervalMs ? `a queue releasing ${rate(1000 / h.intervalMs)}/s` : undefined;
  const slowDown = h.stepMs ? `a slow-down adding ${duration(h.stepMs)} a request` : undefined;
  if (queue && slowDown) return `${queue} for ${h.queued}, ${slowDown} for ${h.slowed}`;
  return queue ?? slowDown ?? 'a queue or a slow-down, not told which';
}

/**
 * The held responses in one line, for the text summary and the report: the holds are latency the
 * service did not spend, yet the percentiles include them, which the line says, with the service
 * time of the rest beside them.
 */
export function describeHeldByLimiter(h: HeldByLimiterSeen): string {
  const u = h.unheld;
  const without =
    u.count === 0
      ? 'every response was held'
      : `without them, service p50 ${latency(u.p50)}, p99 ${latency(u.p99)}`;
  return `${h.responses} response${h.responses === 1 ? '' : 's'} held by the target's limiter (${whatHeld(h)}): ${duration(h.totalMs)} in all, ${duration(h.longestMs)} the longest — latency beyond the service's own, included in the latency percentiles; ${without}`;
}
