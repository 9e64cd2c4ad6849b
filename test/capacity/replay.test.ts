import { describe, expect, it } from 'vitest';
import { type LimiterModel, SlidingCounter, TokenBucket } from '../../src/api/limiter-models.ts';
import type { Plan } from '../../src/api/plans.ts';
import type { Shot } from '../../src/capacity/probe-client.ts';
import { checkedModel, mispredicted, pacedDoubt } from '../../src/capacity/verify/replay.ts';
import type { LimiterReport } from '../../src/result/capacity-types.ts';
import { probeSimulated } from '../helpers/capacity-cases.ts';

/** What `model` answers to requests at `times`: the answers a probe would have seen. */
function answered(model: LimiterModel, times: number[]): Shot[] {
  return times.map((at) => ({ at, admitted: model.admit('k', at).allowed }));
}

/** A burst of 10, then one a second for 20 s, then a request every 4 s: a probe's shape. */
const TIMES = [
  ...Array.from({ length: 11 }, (_, i) => 100 + i),
  ...Array.from({ length: 20 }, (_, i) => 10_500 + i * 1000),
  ...Array.from({ length: 5 }, (_, i) => 31_000 + i * 4000),
];

const bucket = (sustainedPerSecond: number, burst: number): LimiterReport => ({
  type: 'token-bucket',
  evidence: [],
  headerDialect: 'none',
  resetSemantics: 'none',
  sustainedPerSecond,
  burst,
  window: null,
  rateSearch: null,
});
const WINDOW = { limit: 10, seconds: 10 };
const PACED = { admitted: 20, spanSeconds: 20 };

describe('a model checked against the answers it must predict', () => {
  it('counts the answers a model predicts otherwise, replayed in the order they were written', () => {
    const truth = answered(new SlidingCounter(10, 10_000), TIMES);
    expect(mispredicted(new SlidingCounter(10, 10_000), truth)).toBe(0);
    expect(mispredicted(new SlidingCounter(10, 10_000), [...truth].reverse())).toBe(0);
    expect(mispredicted(new TokenBucket(1, 4000, 10), truth)).toBeGreaterThan(3);
  });

  it('doubts a spacing model slower than the paced windows, and rejects one they exceed', () => {
    expect(pacedDoubt(bucket(1, 10), PACED)).toBeUndefined();
    expect(pacedDoubt(bucket(0.97, 10), PACED)).toBeUndefined();
    expect(pacedDoubt(bucket(0.5, 10), PACED)).toMatchObject({ rejected: false });
    expect(pacedDoubt(bucket(0.25, 10), PACED)?.why).toMatch(
      /admitted 20 requests in 20 s, more than a token-bucket of 10 at 0.25\/s admits \(16\)/,
    );
    expect(pacedDoubt({ ...bucket(0.25, 10), type: 'fixed-window' }, PACED)).toBeUndefined();
  });

  it('replaces a doubted bucket by the sliding counter its answers came from', () => {
    const truth = answered(new SlidingCounter(10, 10_000, true), TIMES);
    const r = checkedModel(bucket(0.5, 10), PACED, truth, WINDOW);
    expect(r.type).toBe('sliding-counter');
    expect(r.sustainedPerSecond).toBe(1);
    expect(r.window).toEqual(WINDOW);
    expect(r.evidence.join('; ')).toMatch(
      /a sliding counter of 10 per 10 s that counts refused requests gets 0/,
    );
  });

  it('keeps a doubted bucket that its answers came from, and names a rejected one unknown when nothing fits', () => {
    const fromBucket = answered(new TokenBucket(1, 2000, 10), TIMES);
    expect(checkedModel(bucket(0.5, 10), PACED, fromBucket, WINDOW).type).toBe('token-bucket');
    const r = checkedModel(bucket(0.25, 10), PACED, fromBucket, WINDOW);
    expect(r.type).toBe('unknown');
    expect(r.sustainedPerSecond).toBeNull();
    expect(r.evidence.join('; ')).toMatch(/nearest: a sliding counter of 10 per 10 s/);
  });
});

describe('capacity against a sliding counter that counts refused requests and tells nothing', () => {
  it('reports a sliding counter admitting the plan rate (within 10% of 1/s), never the rate its own refusals left it', async () => {
    const plan: Plan = { name: 'free', windows: [{ name: 'short', limit: 10, seconds: 10 }] };
    const { report: r, result } = await probeSimulated(
      {
        plans: { free: plan },
        keys: { 'free-demo-key': 'free' },
        seedData: 3,
        limiter: 'sliding-counter',
        countRefused: true,
        headerDialect: 'none',
      },
      plan,
    );
    const why = r.limiter.evidence.join('; ');
    expect(r.limiter.type, why).toBe('sliding-counter');
    expect(Math.abs((r.limiter.sustainedPerSecond ?? 0) - 1)).toBeLessThanOrEqual(0.1);
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    expect(result.compliance.violations).toBe(0);
  }, 60_000);
});
