import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { decodeHistogram } from '../../src/record/histogram.ts';
import { mergeResults } from '../../src/report/merge.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { spread, type TenantSample, tenantMix, tenantOf, tenantResult } from '../result/tenant-fixture.ts';

/*
 * A tenant run split over two generators the way --shard and --workers split it (each key in one of
 * them, by its index), merged, and held against one generator that sent every request.
 */

const mix = tenantMix();
const samples: TenantSample[] = [
  ...spread(['free#1', 'free#2', 'free#3', 'free#4'], 12, 0, 5000, 3),
  ...spread(['free#1', 'free#2', 'free#3', 'free#4'], 12, 5000, 10_000, 30),
  ...spread(['pro#1', 'pro#2'], 25, 0, 10_000, 4),
  ...spread(['abusive#1', 'abusive#2'], 10, 5000, 10_000, 1).map((s, i) => ({
    ...s,
    status: i % 3 === 0 ? 429 : 200,
  })),
  { tenant: 'vip#1', at: 2000, status: 500 },
  { tenant: 'free#5', at: 3000, errorCode: 'ECONNRESET' },
];
const shardOf = (s: TenantSample) => tenantOf(mix, s.tenant).index % 2;

let single: RunResult;
let merged: RunResult;
let shards: RunResult[];

beforeAll(async () => {
  single = await tenantResult(mix, samples);
  shards = await Promise.all(
    [0, 1].map((i) =>
      tenantResult(
        mix,
        samples.filter((s) => shardOf(s) === i),
        { shard: { index: i + 1, count: 2 } },
      ),
    ),
  );
  merged = mergeResults(shards);
});

describe('mergeResults: a tenant mix', () => {
  it('gives the tiers of one run: counts, admitted per key, keys seen, utilisation and rate', () => {
    for (const field of ['byPlan', 'byTenantGroup'] as const) {
      const one = single[field] ?? {};
      const both = merged[field] ?? {};
      expect(Object.keys(both).sort()).toEqual(Object.keys(one).sort());
      for (const [name, tier] of Object.entries(one)) {
        // The encoded histograms may differ in their bytes; their figures may not.
        const { histograms: _one, ...figures } = tier;
        const { histograms: _both, ...mergedFigures } = both[name] as typeof tier;
        expect({ name, ...mergedFigures }).toEqual({ name, ...figures });
      }
    }
    // Each shard alone saw some of the keys: its spread counts the others as silent.
    expect(shards[0]?.byPlan?.free?.utilization.min).toBe(0);
    expect(merged.byPlan?.free?.keysSeen).toBe(5);
    expect(merged.byPlan?.free?.admittedPerKey).toEqual([24, 24, 24, 24, 0]);
  });

  it('judges isolation again on the added stretches, as one run judges it', () => {
    expect(single.isolation?.passed).toBe(false);
    expect(merged.isolation?.passed).toBe(single.isolation?.passed);
    expect(merged.isolation?.noisyGroups).toEqual(['abusive']);
    for (const [plan, tier] of Object.entries(single.isolation?.tiers ?? {})) {
      const m = merged.isolation?.tiers[plan];
      // The same figures; the encoded histograms may differ in their bytes, not in their counts.
      const { histogram: beforeBytes, ...before } = tier.before;
      const { histogram: afterBytes, ...after } = tier.after;
      expect(m?.before).toMatchObject(before);
      expect(m?.after).toMatchObject(after);
      expect(decodeHistogram(m?.before.histogram as string).totalCount).toBe(
        decodeHistogram(beforeBytes).totalCount,
      );
      expect(decodeHistogram(m?.after.histogram as string).totalCount).toBe(
        decodeHistogram(afterBytes).totalCount,
      );
      expect(m?.passed).toBe(tier.passed);
      expect(m?.pValue).toBeCloseTo(tier.pValue ?? 0, 12);
    }
    expect(merged.isolation?.detail).toBe(single.isolation?.detail);
  });

  it('follows the contract, keeps one result as it is, and has no tiers when no part had any', () => {
    expect(resultProblem(merged)).toBeUndefined();
    const alone = mergeResults([single]);
    const figures = (tiers: RunResult['byPlan']) =>
      Object.values(tiers ?? {}).map(({ histograms: _, ...rest }) => rest);
    expect(figures(alone.byPlan)).toEqual(figures(single.byPlan));
    expect(alone.isolation).toEqual(single.isolation);
    const plain = structuredClone(single);
    delete plain.byPlan;
    delete plain.byTenantGroup;
    delete plain.isolation;
    const none = mergeResults([plain, plain]);
    expect(none.byPlan).toBeUndefined();
    expect(none.isolation).toBeUndefined();
  });

  it('refuses tiers of different quotas (another time scale)', () => {
    const other = structuredClone(shards[1] as RunResult);
    (other.byPlan?.pro as { planRatePerKey: number }).planRatePerKey = 50;
    expect(() => mergeResults([shards[0] as RunResult, other], ['a.json', 'b.json'])).toThrow(InputError);
    expect(() => mergeResults([shards[0] as RunResult, other], ['a.json', 'b.json'])).toThrow(
      /b\.json: byPlan\.pro: 50 requests per second per key differs from 5/,
    );
  });
});
