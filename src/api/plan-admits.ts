import type { RateWindow } from './plans.ts';

/**
 * The most requests a plan's windows, all at once, admit over `spanMs`: each window admits its
 * limit over a span no longer than itself, and its rate over a longer one; the plan admits what
 * the tightest of them does. Utilisation is measured against this, never against one window's
 * rate: against 10 per 10 s and 20 per 30 s, the shorter's rate promises half again what the
 * longer one lets through, and over a minute a day's window binds nothing.
 */
export function mostAdmitted(windows: readonly RateWindow[], spanMs: number): number {
  if (windows.length === 0 || !(spanMs > 0)) return 0;
  let most = Number.POSITIVE_INFINITY;
  for (const w of windows) most = Math.min(most, w.limit * Math.max(1, spanMs / (w.seconds * 1000)));
  return most;
}
