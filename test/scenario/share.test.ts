import { describe, expect, it } from 'vitest';
import { parseShare, shareOf, shareOfCounts } from '../../src/scenario/share.ts';
import { tenantShare } from '../../src/scenario/tenant-load.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';

describe('a share of a workload', () => {
  it('splits virtual users and iterations in whole numbers that add up, and divides rates', () => {
    const closed = resolveWorkload({ executor: 'constant-vus', vus: 8, duration: '10s', iterations: 100 }, 1);
    const parts = [1, 2, 3].map((index) => shareOf(closed, { index, count: 3 }));
    expect(parts.map((p) => p.vusAt(0))).toEqual([3, 3, 2]);
    expect(parts.map((p) => p.iterations)).toEqual([34, 33, 33]);
    expect(parts.every((p) => p.durationMs === 10_000)).toBe(true);
    const open = resolveWorkload({ executor: 'constant-arrival-rate', rate: 30, duration: '5s' }, 1);
    expect(shareOf(open, { index: 2, count: 3 }).rateAt(0)).toBe(10);
    expect(shareOf(open, { index: 1, count: 1 })).toBe(open);
  });

  it("splits a tenant mix's counts but keeps its rates and per-key bound: its keys are what is spread", () => {
    const open = resolveWorkload(
      { executor: 'constant-arrival-rate', rate: 30, duration: '5s', iterations: 10, maxInFlight: 4 },
      1,
    );
    const part = shareOfCounts(open, { index: 1, count: 3 });
    expect([part.rateAt(0), part.maxInFlight, part.iterations]).toEqual([30, 4, 4]);
    expect(shareOfCounts(open, undefined)).toBe(open);
    // Worker w of W within shard s of S: every key index has exactly one home.
    const homes = new Map<number, string>();
    for (const s of [1, 2])
      for (const w of [1, 2, 3]) {
        const share = tenantShare({ index: s, count: 2 }, { index: w, count: 3 }) as {
          index: number;
          count: number;
        };
        for (let i = 0; i < 24; i++)
          if (i % share.count === share.index - 1) {
            expect(homes.has(i)).toBe(false);
            expect(i % 2).toBe(s - 1);
            homes.set(i, `${s}/${w}`);
          }
      }
    expect(homes.size).toBe(24);
  });

  it('reads I/N, and refuses what is not a part of a whole', () => {
    expect(parseShare('2/3', '--shard')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0'])
      expect(() => parseShare(bad, '--shard'), bad).toThrow(/--shard: expected I\/N/);
  });
});
