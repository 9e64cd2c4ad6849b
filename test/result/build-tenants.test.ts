import { beforeAll, describe, expect, it } from 'vitest';
import { decodeHistogram } from '../../src/record/histogram.ts';
import { utilizationOf } from '../../src/result/build-tenants.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { spread, tenantMix, tenantResult } from './tenant-fixture.ts';

const mix = tenantMix();

describe('utilizationOf', () => {
  it('is admitted over what the keys were allowed, spread across keys, a silent key counting 0', () => {
    // 4 keys at 1/s for 10 s: 10 allowed each.
    expect(utilizationOf([10, 5, 0, 5], 4, 1, 10)).toEqual({ overall: 0.5, min: 0, p50: 0.5, max: 1 });
    // A shorter list (a part that saw fewer keys) counts the missing keys as 0.
    expect(utilizationOf([2], 3, 1, 10)).toEqual({ overall: 2 / 30, min: 0, p50: 0, max: 0.2 });
    // The lower median of an even count is a share some key had.
    expect(utilizationOf([1, 2, 3, 4], 4, 1, 10).p50).toBe(0.2);
  });

  it('is 0 without a rate, a span or keys', () => {
    const zero = { overall: 0, min: 0, p50: 0, max: 0 };
    expect(utilizationOf([3], 1, 0, 10)).toEqual(zero);
    expect(utilizationOf([3], 1, 1, 0)).toEqual(zero);
    expect(utilizationOf([], 0, 1, 10)).toEqual(zero);
  });
});

describe('buildResult with a tenant mix', () => {
  let result: RunResult;
  let slow: RunResult;

  beforeAll(async () => {
    // 10 s; free#1 sends 10 (its whole quota), free#2 5, the others of free nothing; pro#1 5.
    const quiet = [
      ...spread(['free#1'], 10, 0, 10_000, 10),
      ...spread(['free#2'], 5, 0, 10_000, 10),
      ...spread(['pro#1'], 5, 0, 10_000, 10),
      { tenant: 'abusive#1', at: 6000, status: 429, retryAfter: 1 },
      { tenant: 'vip#1', at: 3000 },
    ];
    result = await tenantResult(mix, quiet);
    // The compliant free tenants slow down tenfold once the abusive group starts at 5 s.
    slow = await tenantResult(mix, [
      ...spread(['free#1', 'free#2', 'free#3'], 20, 0, 5000, 2),
      ...spread(['free#1', 'free#2', 'free#3'], 20, 5000, 10_000, 20),
      ...spread(['pro#1'], 30, 0, 10_000, 2),
    ]);
  });

  it('gives byPlan for unnamed groups and byTenantGroup for named ones', () => {
    expect(Object.keys(result.byPlan ?? {}).sort()).toEqual(['free', 'pro']);
    expect(Object.keys(result.byTenantGroup ?? {}).sort()).toEqual(['abusive', 'vip']);
    const free = result.byPlan?.free;
    expect(free).toMatchObject({
      plan: 'free',
      keys: 5,
      keysSeen: 2,
      enforce: true,
      requests: 15,
      rate: 1.5,
      rateLimited: 0,
      errors: 0,
      admitted: 15,
      planRatePerKey: 1,
      admittedPerKey: [10, 5, 0, 0, 0],
    });
    expect(free?.response.count).toBe(15);
    expect(decodeHistogram(free?.histograms.response as string).totalCount).toBe(15);
    expect(result.byTenantGroup?.abusive).toMatchObject({
      enforce: false,
      rateLimited: 1,
      rateLimitedRate: 1,
    });
  });

  it('measures utilisation overall and its spread across the keys', () => {
    // 15 admitted of 5 keys x 10 s x 1/s.
    expect(result.byPlan?.free?.utilization).toEqual({ overall: 0.3, min: 0, p50: 0, max: 1 });
    // 5 of 2 keys x 10 s x 5/s.
    expect(result.byPlan?.pro?.utilization).toEqual({ overall: 0.05, min: 0, p50: 0, max: 0.1 });
  });

  it('counts a tier that starts later from its own start', async () => {
    // The abusive group starts at 5 s of 10: its keys had 5 s of quota each, not 10.
    const late = await tenantResult(mix, spread(['abusive#1', 'abusive#2'], 5, 5000, 10_000, 5));
    const abusive = late.byTenantGroup?.abusive;
    expect(abusive?.startSeconds).toBe(5);
    expect(abusive?.rate).toBeCloseTo(2, 5);
    expect(abusive?.utilization).toEqual({ overall: 1, min: 1, p50: 1, max: 1 });
    expect(late.byPlan?.free?.startSeconds).toBeUndefined();
    expect(resultProblem(late)).toBeUndefined();
  });

  it('judges isolation from the stretches before and after the noisy group started', () => {
    expect(result.isolation).toMatchObject({ passed: true, noisyGroups: ['abusive'], noisyFromMs: 5000 });
    const free = result.isolation?.tiers.free;
    expect((free?.before.requests ?? 0) + (free?.after.requests ?? 0)).toBe(15);
    expect(free?.before.requests).toBe(8);
    expect(decodeHistogram(free?.before.histogram as string).totalCount).toBe(8);

    expect(slow.isolation?.passed).toBe(false);
    const tier = slow.isolation?.tiers.free;
    expect(tier).toMatchObject({ passed: false, before: { requests: 60 }, after: { requests: 60 } });
    expect(tier?.before.p50Ms).toBeCloseTo(2.2, 0);
    expect(tier?.after.p50Ms).toBeCloseTo(20.2, 0);
    expect(tier?.pValue).toBeLessThan(0.001);
    expect(slow.isolation?.tiers.pro?.passed).toBe(true);
    expect(slow.isolation?.detail).toContain('free:');
  });

  it('follows the result contract, after a JSON round trip too', () => {
    expect(resultProblem(result)).toBeUndefined();
    expect(resultProblem(JSON.parse(JSON.stringify(slow)))).toBeUndefined();
  });

  it('is refused by the schema when a tier or the verdict is malformed', () => {
    // Edits a copy as plain JSON, the way a file on disk would be damaged.
    const broken = (edit: (r: Record<string, Record<string, Record<string, unknown>>>) => void) => {
      const copy = structuredClone(result) as unknown as Record<
        string,
        Record<string, Record<string, unknown>>
      >;
      edit(copy);
      return resultProblem(copy);
    };
    const free = (r: Record<string, Record<string, Record<string, unknown>>>) =>
      (r.byPlan as Record<string, Record<string, unknown>>).free as Record<string, unknown>;
    expect(broken((r) => delete free(r).utilization)).toMatch(
      /byPlan\/free must have required property 'utilization'/,
    );
    expect(broken((r) => (free(r).admittedPerKey = [-1]))).toMatch(/admittedPerKey\/0/);
    expect(broken((r) => ((r.isolation as Record<string, unknown>).passed = 'yes'))).toMatch(
      /isolation\/passed/,
    );
    expect(
      broken(
        (r) =>
          (((r.isolation as Record<string, unknown>).tiers as Record<string, object>).free = { extra: 1 }),
      ),
    ).toMatch(/isolation\/tiers\/free/);
  });

  it('has no byTenantGroup without named groups, and no verdict without a noisy neighbour', async () => {
    const plain = tenantMix([{ plan: 'free', keys: 2 }]);
    const r = await tenantResult(plain, [{ tenant: 'free#1', at: 100 }]);
    expect(r.byPlan?.free?.requests).toBe(1);
    expect(r.byTenantGroup).toBeUndefined();
    expect(r.isolation).toBeUndefined();
  });
});
