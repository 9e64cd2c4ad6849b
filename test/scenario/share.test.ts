import { describe, expect, it } from 'vitest';
import { parseShare, shareOf } from '../../src/scenario/share.ts';
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

  it('reads I/N, and refuses what is not a part of a whole', () => {
    expect(parseShare('2/3', '--shard')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0'])
      expect(() => parseShare(bad, '--shard'), bad).toThrow(/--shard: expected I\/N/);
  });
});
