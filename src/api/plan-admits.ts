import { createLimiterModel, type LimiterModelName } from './limiter-models.ts';
import type { RateWindow } from './plans.ts';

const KEY = 'plan';

/**
 * The most requests a plan's windows, all at once, admit over `spanMs`: a client that sends the
 * moment every window would admit it, played through the plan's own limiter model. Utilisation is
 * measured against this, never against one window's rate: against two windows (10 per 10 s and 20
 * per 30 s) the shorter's rate promises half again what the longer one lets through.
 */
export function mostAdmitted(
  windows: readonly RateWindow[],
  spanMs: number,
  model: LimiterModelName = 'fixed',
): number {
  if (windows.length === 0 || !(spanMs > 0)) return 0;
  const models = windows.map((w) =>
    createLimiterModel(model, { limit: w.limit, windowMs: w.seconds * 1000 }),
  );
  let admitted = 0;
  for (let t = 0; t < spanMs; ) {
    let room = Number.POSITIVE_INFINITY;
    for (const m of models) {
      const seen = m.peek(KEY, t);
      room = Math.min(room, seen.allowed ? seen.remaining + 1 : 0);
    }
    for (let i = 0; i < room; i++) for (const m of models) m.admit(KEY, t);
    admitted += room;
    // Every window but the one that binds has room left: the next send waits for the last to admit.
    let waitMs = 0;
    for (const m of models) waitMs = Math.max(waitMs, m.peek(KEY, t).retryAfterMs);
    t += Math.max(waitMs, 1e-3);
  }
  return admitted;
}
