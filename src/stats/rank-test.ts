import type { RankedBuckets } from './histogram-ranks.ts';

/**
 * Two-sided Mann-Whitney U test (normal approximation with tie and continuity corrections): does
 * `b` tend to lie above or below `a`? Rank-based, so one wild value moves it no more than any other.
 * Returns the two-sided p-value and the direction of the shift.
 */
export function mannWhitney(
  a: readonly number[],
  b: readonly number[],
): { p: number; direction: -1 | 0 | 1 } {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) return { p: 1, direction: 0 };
  const all = [...a.map((v) => ({ v, fromB: false })), ...b.map((v) => ({ v, fromB: true }))].sort(
    (x, y) => x.v - y.v,
  );
  const n = n1 + n2;
  let rankSumB = 0;
  let ties = 0;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && (all[j + 1] as (typeof all)[number]).v === (all[i] as (typeof all)[number]).v) j++;
    const rank = (i + j + 2) / 2;
    const size = j - i + 1;
    ties += size ** 3 - size;
    for (let k = i; k <= j; k++) if ((all[k] as (typeof all)[number]).fromB) rankSumB += rank;
    i = j + 1;
  }
  const shift = uShift(rankSumB, n1, n2, ties);
  if (shift === undefined) return { p: 1, direction: 0 };
  const z = Math.max(0, Math.abs(shift.distance) - 0.5) / shift.sd;
  return { p: Math.min(1, 2 * upperTail(z)), direction: shift.direction };
}

/**
 * U of `b` against `a` from b's rank sum, against its mean and standard deviation under no shift
 * (ties corrected: `ties` is the sum of t^3 - t over groups of t equal values). Undefined when every
 * value is equal, where no shift can show.
 */
function uShift(
  rankSumB: number,
  n1: number,
  n2: number,
  ties: number,
): { distance: number; sd: number; direction: -1 | 0 | 1 } | undefined {
  const n = n1 + n2;
  const u = rankSumB - (n2 * (n2 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  if (variance <= 0) return undefined;
  return { distance: u - mean, sd: Math.sqrt(variance), direction: u > mean ? 1 : u < mean ? -1 : 0 };
}

/**
 * One-sided Mann-Whitney U test on two histograms: the p-value of `b` lying above `a` (b slower),
 * the same statistic as mannWhitney with a continuity correction, one tail. Each bucket is a group
 * of ties (the histogram cannot tell its samples apart), so it costs the buckets, not the samples:
 * a million requests are a few thousand buckets.
 */
export function mannWhitneyGreater(a: RankedBuckets, b: RankedBuckets): number {
  const n1 = a.total;
  const n2 = b.total;
  if (n1 === 0 || n2 === 0) return 1;
  let i = 0;
  let j = 0;
  let below = 0;
  let rankSumB = 0;
  let ties = 0;
  const count = (r: RankedBuckets, k: number) =>
    (r.cumulative[k] as number) - (k > 0 ? (r.cumulative[k - 1] as number) : 0);
  while (i < a.values.length || j < b.values.length) {
    const va = i < a.values.length ? (a.values[i] as number) : Number.POSITIVE_INFINITY;
    const vb = j < b.values.length ? (b.values[j] as number) : Number.POSITIVE_INFINITY;
    const v = Math.min(va, vb);
    const fromA = va === v ? count(a, i++) : 0;
    const fromB = vb === v ? count(b, j++) : 0;
    const size = fromA + fromB;
    // The group's ranks are below + 1 .. below + size; each of them gets their mean.
    rankSumB += fromB * (below + (size + 1) / 2);
    ties += size ** 3 - size;
    below += size;
  }
  const shift = uShift(rankSumB, n1, n2, ties);
  if (shift === undefined) return 1;
  return Math.min(1, upperTail((shift.distance - 0.5) / shift.sd));
}

/** P(Z > z) for a standard normal Z (erfc after Numerical Recipes' erfcc, relative error < 1.2e-7). */
export function upperTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}
