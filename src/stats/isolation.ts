import { decodeHistogram } from '../record/histogram.ts';
import type { IsolationStretch, IsolationTier, IsolationVerdict } from '../result/types.ts';
import { rankedBuckets } from './histogram-ranks.ts';
import { mannWhitneyGreater } from './rank-test.ts';
import { proportionDifference } from './rate-intervals.ts';
import { normalQuantile } from './variates.ts';

/**
 * The noisy-neighbour verdict of a tenant mix: per plan, the compliant tenants (unnamed groups)
 * after the noisy group started against before it. A tier fails on any of:
 *
 * - 429s after (`after.rateLimited > 0`): a paced tenant keeps to its own quota, so a 429 means
 *   someone else's traffic spent it (a shared bucket). Any 429 counts, whatever came before: a
 *   compliant tenant is never to be refused.
 * - errors (5xx, transport) whose share after is above before's, significantly: Newcombe's interval of
 *   the difference (as `compare` tests error rates) excludes 0 at one-sided ALPHA. One stray
 *   timeout among a thousand requests is not enough; errors that the noise brought in numbers are.
 * - a slowdown: response time after slower than before by the one-sided Mann-Whitney U test on the
 *   two histograms, p < ALPHA, AND the p50 at least SLOWDOWN_RATIO times before's AND at least
 *   SLOWDOWN_MS slower. The test alone cannot be the gate: requests of one second share its stalls,
 *   so a few thousand of them make any shift "significant", and on loopback a loaded 2-core CI
 *   machine moves a 1.7 ms p50 by a millisecond or two (the load generator, the server and another
 *   test file share the cores, and the noisy group's own traffic adds to that even when the server
 *   isolates it perfectly). compare's tolerances (10%) are for two quiet runs, not for that: a
 *   neighbour that doubles the median and costs 5 ms is one nobody would call noise, on loopback or
 *   across a network (where 5 ms is below the jitter and the doubling decides).
 *
 * A side with fewer than MIN_SAMPLES response times cannot be tested: the tier's latency part is
 * null (pValue null) and passes; the verdict's detail says so. The p99 is shown, never judged: one
 * slow second moves it.
 */

/** One in a thousand: with a handful of tiers per run, a false alarm in well under 1% of runs. */
export const ALPHA = 0.001;
export const SLOWDOWN_RATIO = 2;
export const SLOWDOWN_MS = 5;
/** Response times per side for the rank test's normal approximation to hold. */
export const MIN_SAMPLES = 20;

export function judgeIsolation(
  noisyGroups: string[],
  noisyFromMs: number,
  stretches: Record<string, { before: IsolationStretch; after: IsolationStretch }>,
): IsolationVerdict {
  const noisy = noisyGroups.length > 0 ? noisyGroups.join(', ') : 'the noisy group';
  const tiers: Record<string, IsolationTier> = {};
  for (const [plan, { before, after }] of Object.entries(stretches))
    tiers[plan] = judgeTier(before, after, noisy);
  const plans = Object.keys(tiers);
  const failing = plans.filter((plan) => !tiers[plan]?.passed);
  const untested = plans.filter((plan) => tiers[plan]?.pValue === null);
  let detail: string;
  if (plans.length === 0) detail = `no compliant tenants to judge against ${noisy}`;
  else if (failing.length > 0) detail = failing.map((plan) => `${plan}: ${tiers[plan]?.reason}`).join('; ');
  else
    detail = `no compliant tier (${plans.join(', ')}) got 429s, new errors or a significant slowdown after ${noisy} started`;
  if (untested.length > 0)
    detail += `; latency not judged for ${untested
      .map(
        (plan) =>
          `${plan} (${tiers[plan]?.before.requests} requests before, ${tiers[plan]?.after.requests} after)`,
      )
      .join(', ')}: fewer than ${MIN_SAMPLES} on a side`;
  return { passed: failing.length === 0, detail, noisyGroups, noisyFromMs, tiers };
}

function judgeTier(before: IsolationStretch, after: IsolationStretch, noisy: string): IsolationTier {
  const pValue = latencyPValue(before, after);
  const ratio = (x: number, y: number) => (before.requests > 0 && y > 0 ? x / y : null);
  const p50Ratio = ratio(after.p50Ms, before.p50Ms);
  const p99Ratio = ratio(after.p99Ms, before.p99Ms);
  const reasons: string[] = [];
  if (after.rateLimited > 0)
    reasons.push(`${after.rateLimited} 429s after ${noisy} started (${before.rateLimited} before)`);
  if (moreErrors(before, after))
    reasons.push(
      `errors ${share(before.errors, before.requests)} -> ${share(after.errors, after.requests)} after ${noisy} started`,
    );
  if (
    pValue !== null &&
    pValue < ALPHA &&
    p50Ratio !== null &&
    p50Ratio >= SLOWDOWN_RATIO &&
    after.p50Ms - before.p50Ms >= SLOWDOWN_MS
  )
    reasons.push(
      `p50 ${ms(before.p50Ms)} -> ${ms(after.p50Ms)} ms (${p50Ratio.toFixed(1)}x, p ${pText(pValue)}) after ${noisy} started`,
    );
  const tier: IsolationTier = { before, after, pValue, p50Ratio, p99Ratio, passed: reasons.length === 0 };
  if (reasons.length > 0) tier.reason = reasons.join('; ');
  return tier;
}

/** One-sided p of "after slower than before"; null when a side has too few samples to test. */
function latencyPValue(before: IsolationStretch, after: IsolationStretch): number | null {
  const a = rankedBuckets(decodeHistogram(before.histogram));
  const b = rankedBuckets(decodeHistogram(after.histogram));
  if (a.total < MIN_SAMPLES || b.total < MIN_SAMPLES) return null;
  return mannWhitneyGreater(a, b);
}

/** Errors after, at a share above before's beyond chance (one-sided, ALPHA). */
function moreErrors(before: IsolationStretch, after: IsolationStretch): boolean {
  // Nothing before (the tier started after the noise): nothing to say the noise changed.
  if (after.errors === 0 || before.requests === 0) return false;
  const z = normalQuantile(1 - ALPHA);
  return proportionDifference(before.errors, before.requests, after.errors, after.requests, z).lower > 0;
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const share = (k: number, n: number) =>
  `${n > 0 ? ((k / n) * 100).toFixed(k > 0 && k / n < 0.01 ? 2 : 1) : 0}%`;

/** 'p < 0.001' reads better than 'p = 2.3e-17'; null: too few samples to test. */
export function describeP(p: number | null): string {
  if (p === null) return 'not tested';
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

const pText = (p: number) => (p < 0.001 ? '< 0.001' : `= ${p.toFixed(3)}`);
