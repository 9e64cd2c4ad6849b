/**
 * Random variates from a uniform source (src/api/random.ts's seeded one), for the bootstrap: a
 * comparison must print the same verdict every time it is run on the same two files.
 */
export class Variates {
  private spare: number | undefined;
  readonly uniform: () => number;

  constructor(uniform: () => number) {
    this.uniform = uniform;
  }

  /** Box-Muller, keeping its second value for the next call: the bootstrap's hot path. */
  normal(): number {
    if (this.spare !== undefined) {
      const z = this.spare;
      this.spare = undefined;
      return z;
    }
    // 1 - u keeps the logarithm away from 0.
    const radius = Math.sqrt(-2 * Math.log(1 - this.uniform()));
    const angle = 2 * Math.PI * this.uniform();
    this.spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  }

  /**
   * Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang, 2000): constant time at any shape. Returns
   * a sampler, so that the bootstrap's thousands of draws of one shape share its constants.
   */
  gamma(shape: number): () => number {
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    return () => {
      for (;;) {
        const x = this.normal();
        const t = 1 + c * x;
        if (t <= 0) continue;
        const v = t * t * t;
        const u = 1 - this.uniform();
        const x2 = x * x;
        // The squeeze accepts most draws without a logarithm.
        if (u < 1 - 0.0331 * x2 * x2) return d * v;
        if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
      }
    };
  }

  /** Beta(a, b) for a, b >= 1, as a sampler. */
  beta(a: number, b: number): () => number {
    const x = this.gamma(a);
    const y = this.gamma(b);
    return () => {
      const g = x();
      return g / (g + y());
    };
  }
}

/**
 * The standard normal quantile (Acklam's rational approximation, relative error under 1.2e-9):
 * the z of an interval at any level, Bonferroni-adjusted ones included.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: ${p} is not in (0, 1)`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}
