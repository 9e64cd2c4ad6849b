/**
 * Intervals for the rates a comparison reads as counts: shares of requests (errors, 429s) and
 * requests per second. Score (Wilson) intervals rather than Wald ones: they stay sensible at zero
 * counts (no errors in the baseline is the usual case), where a Wald interval collapses to a point.
 */

export interface Interval {
  lower: number;
  upper: number;
}

/** Wilson score interval for a proportion k/n. */
export function wilson(k: number, n: number, z: number): Interval {
  if (n <= 0) return { lower: 0, upper: 1 };
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

/**
 * Interval of p2 - p1 for two independent proportions: Newcombe's hybrid score interval (1998,
 * method 10), which keeps its coverage where the two-proportion z-test's normal approximation fails
 * (few or no events on a side) and agrees with it elsewhere.
 */
export function proportionDifference(k1: number, n1: number, k2: number, n2: number, z: number): Interval {
  const p1 = k1 / n1;
  const p2 = k2 / n2;
  const w1 = wilson(k1, n1, z);
  const w2 = wilson(k2, n2, z);
  const d = p2 - p1;
  return {
    lower: d - Math.sqrt((p2 - w2.lower) ** 2 + (w1.upper - p1) ** 2),
    upper: d + Math.sqrt((w2.upper - p2) ** 2 + (p1 - w1.lower) ** 2),
  };
}

/**
 * Interval of the ratio of two Poisson rates (c2/t2) / (c1/t1): given c1 + c2 events, c2 is binomial
 * with p = t2 r2 / (t1 r1 + t2 r2), so a Wilson interval for p maps onto the ratio. Paced traffic is
 * steadier than Poisson, which makes this conservative: it errs towards "not significant".
 */
export function rateRatio(c1: number, t1: number, c2: number, t2: number, z: number): Interval {
  const w = wilson(c2, c1 + c2, z);
  const toRatio = (p: number) => (p >= 1 ? Number.POSITIVE_INFINITY : (p / (1 - p)) * (t1 / t2));
  return { lower: toRatio(w.lower), upper: toRatio(w.upper) };
}
