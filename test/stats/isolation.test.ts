import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/api/random.ts';
import { encodeHistogram, latencyStats, newHistogram } from '../../src/record/histogram.ts';
import type { IsolationStretch } from '../../src/result/types.ts';
import { judgeIsolation } from '../../src/stats/isolation.ts';

/**
 * judgeIsolation on stretches made here: response times drawn from a log-normal around a median
 * (loopback-like spread), encoded as the result encodes them, with 429s and errors as given.
 */
function stretch(
  medianMs: number,
  requests: number,
  seed: number,
  extra: { rateLimited?: number; errors?: number } = {},
): IsolationStretch {
  const random = seededRandom(seed);
  const h = newHistogram();
  for (let i = 0; i < requests; i++) {
    // Box-Muller: a spread of about x1.5 either side of the median, as a quiet loopback run shows.
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    h.recordValue(Math.max(1, Math.round(medianMs * 1000 * Math.exp(0.4 * z))));
  }
  const stats = latencyStats(h);
  return {
    requests,
    rateLimited: extra.rateLimited ?? 0,
    errors: extra.errors ?? 0,
    p50Ms: stats.p50,
    p99Ms: stats.p99,
    histogram: encodeHistogram(h),
  };
}

const judge = (stretches: Parameters<typeof judgeIsolation>[2]) =>
  judgeIsolation(['abusive'], 5000, stretches);

describe('judgeIsolation', () => {
  it('passes tiers whose response times after are drawn as before, and says so', () => {
    const verdict = judge({
      free: { before: stretch(1.7, 2000, 1), after: stretch(1.7, 2000, 2) },
      pro: { before: stretch(1.7, 800, 3), after: stretch(1.7, 800, 3) },
    });
    expect(verdict.passed).toBe(true);
    expect(verdict.noisyGroups).toEqual(['abusive']);
    expect(verdict.noisyFromMs).toBe(5000);
    expect(verdict.detail).toBe(
      'no compliant tier (free, pro) got 429s, new errors or a significant slowdown after abusive started',
    );
    expect(verdict.tiers.free?.pValue).toBeGreaterThan(0.01);
    // The very same histogram on both sides: no shift, p about one half.
    expect(verdict.tiers.pro?.pValue).toBeCloseTo(0.5, 1);
    expect(verdict.tiers.pro?.p50Ratio).toBe(1);
    expect(verdict.tiers.pro?.reason).toBeUndefined();
  });

  it('fails a tier whose compliant tenants got 429s after the noisy group started', () => {
    const verdict = judge({
      free: { before: stretch(1.7, 500, 1), after: stretch(1.7, 500, 2) },
      pro: { before: stretch(1.7, 500, 3), after: stretch(1.7, 500, 4, { rateLimited: 37 }) },
    });
    expect(verdict.passed).toBe(false);
    expect(verdict.tiers.free?.passed).toBe(true);
    expect(verdict.tiers.pro).toMatchObject({
      passed: false,
      reason: '37 429s after abusive started (0 before)',
    });
    expect(verdict.detail).toBe('pro: 37 429s after abusive started (0 before)');
  });

  it('fails a tier on a large slowdown, and passes one within the tolerance however significant', () => {
    const verdict = judge({
      // 2 ms to 20 ms: ten times the median, 18 ms more.
      free: { before: stretch(2, 1000, 1), after: stretch(20, 1000, 2) },
      // 1.7 ms to 2.6 ms: significant over thousands of requests, but a loaded CI machine does that.
      pro: { before: stretch(1.7, 3000, 3), after: stretch(2.6, 3000, 4) },
      // Three times slower, but 2 ms: still the noise of loopback on a busy machine.
      business: { before: stretch(1, 3000, 5), after: stretch(3, 3000, 6) },
    });
    expect(verdict.passed).toBe(false);
    const free = verdict.tiers.free;
    expect(free?.passed).toBe(false);
    expect(free?.pValue).toBeLessThan(0.001);
    expect(free?.p50Ratio).toBeGreaterThan(8);
    expect(free?.reason).toMatch(
      /^p50 2\.\d\d -> 2\d\.\d ms \(\d+\.\dx, p < 0\.001\) after abusive started$/,
    );
    for (const plan of ['pro', 'business']) {
      expect(verdict.tiers[plan]?.pValue).toBeLessThan(0.001);
      expect(verdict.tiers[plan]?.passed).toBe(true);
    }
    expect(verdict.detail).toMatch(/^free: p50 /);
  });

  it('leaves latency unjudged with too few requests on a side, and says so', () => {
    const verdict = judge({
      business: { before: stretch(2, 200, 1), after: stretch(50, 12, 2) },
    });
    expect(verdict.passed).toBe(true);
    expect(verdict.tiers.business).toMatchObject({ pValue: null, passed: true });
    expect(verdict.detail).toContain(
      'latency not judged for business (200 requests before, 12 after): fewer than 20 on a side',
    );
  });

  it('fails on errors that came in numbers after, not on one stray error', () => {
    const verdict = judge({
      free: { before: stretch(2, 1000, 1), after: stretch(2, 1000, 2, { errors: 50 }) },
      pro: { before: stretch(2, 1000, 3), after: stretch(2, 1000, 4, { errors: 1 }) },
    });
    expect(verdict.tiers.free).toMatchObject({
      passed: false,
      reason: 'errors 0.0% -> 5.0% after abusive started',
    });
    expect(verdict.tiers.pro?.passed).toBe(true);
    expect(verdict.detail).toBe('free: errors 0.0% -> 5.0% after abusive started');
  });

  it('passes a mix with no compliant tier, saying there was nothing to judge', () => {
    expect(judgeIsolation(['abusive', 'scraper'], 0, {})).toMatchObject({
      passed: true,
      detail: 'no compliant tenants to judge against abusive, scraper',
    });
  });
});
