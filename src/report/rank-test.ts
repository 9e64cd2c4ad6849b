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
  const u = rankSumB - (n2 * (n2 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  if (variance <= 0) return { p: 1, direction: 0 };
  const z = Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { p: Math.min(1, 2 * upperTail(z)), direction: u > mean ? 1 : u < mean ? -1 : 0 };
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
