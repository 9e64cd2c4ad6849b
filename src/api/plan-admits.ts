import { type RateWindow, shortestWindow } from './plans.ts';

/**
 * The most requests a plan's windows, all at once, admit over `spanMs` to a client that keeps to
 * them: the shortest window's rate over the span (its intervals, and the one request at the span's
 * start), held to what each longer window admits: its limit over a span no longer than itself, its
 * rate over a longer one. Utilisation is measured against this, never against one window's rate
 * alone: beside 20 per 30 s, 10 per 10 s promises half again what the plan lets through, while over
 * a minute a day's window binds nothing.
 */
export function mostAdmitted(windows: readonly RateWindow[], spanMs: number): number {
  const shortest = shortestWindow(windows);
  if (!shortest || !(spanMs > 0)) return 0;
  let most = (shortest.limit * spanMs) / (shortest.seconds * 1000) + 1;
  for (const w of windows)
    if (w !== shortest) most = Math.min(most, w.limit * Math.max(1, spanMs / (w.seconds * 1000)));
  return most;
}

/** The rate that binds over `spanMs`, per second: what the summary names beside utilisation. */
export function bindingRate(windows: readonly RateWindow[], spanMs: number): number {
  const shortest = shortestWindow(windows);
  if (!shortest || !(spanMs > 0)) return 0;
  let rate = shortest.limit / shortest.seconds;
  for (const w of windows)
    if (w !== shortest)
      rate = Math.min(rate, (w.limit * Math.max(1, spanMs / (w.seconds * 1000))) / (spanMs / 1000));
  return rate;
}
