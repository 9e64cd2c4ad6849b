import type { CapacityReport, LimiterType } from '../result/capacity-types.ts';

/**
 * The limiter as a client sees it, from three observations: whether the quota came back all at
 * once (Remaining of the first admitted probe), whether X-RateLimit-Reset stayed put within a
 * window, and how much quota a tenth of a window later added.
 *   fixed window:   all at once, Reset stable within a window;
 *   sliding window: the quota trickles back as old requests age out (or all at once after a burst,
 *                   but Reset moves with every request);
 *   token bucket:   a steady refill, about limit / 10 in a tenth of a window.
 */
export function inferLimiter(r: CapacityReport): { type: LimiterType; evidence: string[] } {
  const L = r.window.limit;
  const evidence: string[] = [];
  const atReturn = r.recovery.remainingAtReturn;
  if (atReturn === null) {
    evidence.push('no X-RateLimit-Remaining on the first admitted probe (or the quota never came back)');
    return { type: 'unknown', evidence };
  }
  const allAtOnce = atReturn >= L - 2;
  evidence.push(
    allAtOnce
      ? `the whole quota came back at once (Remaining ${atReturn} of ${L})`
      : `only part of the quota came back (Remaining ${atReturn} of ${L})`,
  );
  const windows = r.rate.resetValuesPerWindow.filter((n) => n > 0);
  const stable = windows.length > 0 && windows.every((n) => n === 1);
  if (windows.length > 0)
    evidence.push(
      stable
        ? 'X-RateLimit-Reset stayed the same within each window'
        : `X-RateLimit-Reset moved within a window (${Math.max(...windows)} values)`,
    );
  if (allAtOnce) {
    if (windows.length === 0) return { type: 'unknown', evidence };
    return { type: stable ? 'fixed-window' : 'sliding-window', evidence };
  }
  const later = r.recovery.remainingAfterTenth;
  if (later === null) return { type: 'unknown', evidence };
  // The probe itself took one, so the refill over a tenth of a window is later - atReturn + 1.
  const refill = later - atReturn + 1;
  const expected = L / 10;
  evidence.push(`a tenth of a window later ${refill} more (a steady refill would give about ${expected})`);
  const steady = refill >= expected * 0.5 && refill <= expected * 1.5 + 1;
  return { type: steady ? 'token-bucket' : 'sliding-window', evidence };
}
