import { InputError } from '../api/input-error.ts';
import type { ResolvedWorkload } from './workload.ts';

/** Part `index` (1-based) of `count`: of a shard on several machines, or of a worker thread. */
export interface Share {
  index: number;
  count: number;
}

/** `I/N` as users type it for --shard. */
export function parseShare(text: string, what: string): Share {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count)
    throw new InputError(`${what}: expected I/N with 1 <= I <= N (e.g. 2/3), got '${text}'`);
  return { index, count };
}

/** The whole number `total` split over `count` parts, the remainder to the first ones: they add up. */
function part(total: number, { index, count }: Share): number {
  const whole = Math.floor(total);
  return Math.floor(whole / count) + (index <= whole % count ? 1 : 0);
}

/**
 * This part's share of a workload, as k6's execution segments split one: arrival rates divided,
 * virtual users and iterations split in whole numbers that add up to the total. Every part runs
 * the whole duration; together they are the workload as declared.
 */
export function shareOf(w: ResolvedWorkload, share: Share): ResolvedWorkload {
  if (share.count === 1) return w;
  return {
    ...w,
    iterations: w.iterations === undefined ? undefined : part(w.iterations, share),
    rateAt: (ms) => w.rateAt(ms) / share.count,
    vusAt: (ms) => part(w.vusAt(ms), share),
    maxInFlight: Math.max(1, Math.ceil(w.maxInFlight / share.count)),
    describe: { ...w.describe, share: `${share.index}/${share.count}` },
  };
}

/**
 * This part's share of a tenant mix's workload: the iteration bound and the virtual users split as
 * shareOf splits them, while rates and the per-key in-flight bound stay whole, since the mix is
 * spread by its keys (tenantLoads) and each key keeps its own rate.
 */
export function shareOfCounts(w: ResolvedWorkload, share: Share | undefined): ResolvedWorkload {
  if (!share || share.count === 1) return w;
  return {
    ...w,
    iterations: w.iterations === undefined ? undefined : part(w.iterations, share),
    vusAt: (ms) => part(w.vusAt(ms), share),
    describe: { ...w.describe, share: `${share.index}/${share.count}` },
  };
}
