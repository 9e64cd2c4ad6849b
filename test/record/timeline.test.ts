import { describe, expect, it } from 'vitest';
import { Timeline } from '../../src/record/timeline.ts';

const START = Date.UTC(2027, 0, 1, 12, 0, 0, 250);
const close = (actual: number, expected: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(expected * 0.002 + 0.001);

describe('Timeline', () => {
  it('buckets responses per second since the start, by outcome', () => {
    const t = new Timeline(START);
    t.add(START + 10, 200, 'admitted', 1_000, 5, 0);
    t.add(START + 999, 201, 'admitted', 2_000, 5.4, 0);
    t.add(START + 500, 429, 'refused', 3_000, 0, 100.6);
    t.add(START + 1000, 500, 'server-error', 4_000, 0, 0);
    t.add(START + 1999, 0, 'transport-error', 5_000, 0, 0);
    t.add(START + 1500, 404, 'admitted', 6_000, 0, 0);
    t.add(START + 3200, 204, 'admitted', 7_000, 0, 0);
    // Received before the start (a clock step): counted in second 0.
    t.add(START - 40, 200, 'admitted', 1_000, 0, 0);
    const points = t.snapshot();
    expect(points.map((p) => p.t)).toEqual([0, 1, 3]);
    expect(points[0]).toMatchObject({ requests: 4, ok: 3, rateLimited: 1, errors: 0, pacingWaitMs: 10 });
    expect(points[0]?.backoffWaitMs).toBe(101);
    // A 404 is neither ok, nor rate limited, nor an error.
    expect(points[1]).toMatchObject({ requests: 3, ok: 0, rateLimited: 0, errors: 2 });
    expect(points[2]).toMatchObject({ t: 3, requests: 1, ok: 1 });
  });

  it("gives each second's service time p50 and p99 in ms", () => {
    const t = new Timeline(START);
    for (let i = 1; i <= 100; i++) t.add(START + 100, 200, 'admitted', i * 1_000, 0, 0);
    t.add(START + 1100, 200, 'admitted', 40_000, 0, 0);
    const [first, second] = t.snapshot();
    close(first?.p50 as number, 50);
    close(first?.p99 as number, 99);
    close(second?.p50 as number, 40);
    close(second?.p99 as number, 40);
  });

  it('keeps figures of seconds folded early and records into new seconds after folding', () => {
    const t = new Timeline(START);
    t.add(START, 200, 'admitted', 3_000, 0, 0);
    // 20 s later: second 0 is folded (its histogram reused) while the run goes on.
    t.add(START + 20_000, 200, 'admitted', 9_000, 0, 0);
    t.add(START + 21_000, 200, 'admitted', 11_000, 0, 0);
    const points = t.snapshot();
    expect(points.map((p) => p.t)).toEqual([0, 20, 21]);
    close(points[0]?.p50 as number, 3);
    close(points[1]?.p50 as number, 9);
    close(points[2]?.p50 as number, 11);
  });

  it('is stable across snapshots', () => {
    const t = new Timeline(START);
    t.add(START + 10, 200, 'admitted', 2_000, 0, 0);
    const a = t.snapshot();
    const b = t.snapshot();
    expect(b).toEqual(a);
    close(b[0]?.p50 as number, 2);
    expect(Object.keys(b[0] ?? {})).not.toContain('histogram');
  });

  it('leaves the newest second open to later responses after a live snapshot', () => {
    const t = new Timeline(START);
    t.add(START + 10, 200, 'admitted', 2_000, 0, 0);
    close(t.snapshot()[0]?.p99 as number, 2);
    // More responses of the same second after the snapshot still count in its percentiles.
    for (let i = 0; i < 99; i++) t.add(START + 20, 200, 'admitted', 50_000, 0, 0);
    const [point] = t.snapshot();
    expect(point?.requests).toBe(100);
    close(point?.p50 as number, 50);
  });
});
