import fc from 'fast-check';
import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import {
  decodeHistogram,
  encodeHistogram,
  latencyStats,
  newHistogram,
  PERCENTILES,
} from '../../src/record/histogram.ts';

/** Relative precision of a 3-significant-digit HdrHistogram. */
const close = (actual: number, expected: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(expected * 0.002 + 0.001);

describe('histogram helpers', () => {
  it('round-trips through the compressed base64 encoding, keeping count and percentiles', () => {
    const h = newHistogram();
    // 1 ms .. 1000 ms and a 30 s outlier, in µs: autoResize must cover the range.
    for (let i = 1; i <= 1000; i++) h.recordValue(i * 1000);
    h.recordValue(30_000_000);
    const text = encodeHistogram(h);
    expect(text).toMatch(/^[A-Za-z0-9+/=]+$/);
    const back = decodeHistogram(text);
    expect(back.totalCount).toBe(1001);
    for (const p of PERCENTILES) expect(back.getValueAtPercentile(p)).toBe(h.getValueAtPercentile(p));
    // Min and max come back as their bucket's bounds: equal within the 3 significant digits.
    close(back.maxValue, h.maxValue);
    close(back.minNonZeroValue, h.minNonZeroValue);
    const [a, b] = [latencyStats(h), latencyStats(back)];
    expect(b.count).toBe(a.count);
    for (const p of ['p50', 'p75', 'p90', 'p95', 'p99', 'p99.9'] as const) expect(b[p]).toBe(a[p]);
  });

  it('encodes and decodes as hdr-histogram-js itself does, to the byte (our encoder spares its pako)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60_000_000 }), { maxLength: 300 }), (values) => {
        const ours = newHistogram();
        const theirs = hdr.build({ bitBucketSize: 32, autoResize: true, numberOfSignificantValueDigits: 3 });
        for (const v of values) {
          ours.recordValue(v);
          theirs.recordValue(v);
        }
        const text = hdr.encodeIntoCompressedBase64(theirs);
        expect(encodeHistogram(ours)).toBe(text);
        const back = decodeHistogram(text);
        const reference = hdr.decodeFromCompressedBase64(text, 32, false);
        expect(back.totalCount).toBe(reference.totalCount);
        expect(back.maxValue).toBe(reference.maxValue);
        expect(back.minNonZeroValue).toBe(reference.minNonZeroValue);
        for (const p of PERCENTILES)
          expect(back.getValueAtPercentile(p)).toBe(reference.getValueAtPercentile(p));
        expect(encodeHistogram(back)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips an empty histogram', () => {
    const back = decodeHistogram(encodeHistogram(newHistogram()));
    expect(back.totalCount).toBe(0);
    expect(latencyStats(back).count).toBe(0);
  });

  it('reports latency stats in milliseconds from microsecond values', () => {
    const h = newHistogram();
    for (let i = 0; i < 90; i++) h.recordValue(2_000);
    for (let i = 0; i < 10; i++) h.recordValue(50_000);
    const s = latencyStats(h);
    expect(s.count).toBe(100);
    close(s.p50, 2);
    close(s.p75, 2);
    close(s.p90, 2);
    close(s.p95, 50);
    close(s.p99, 50);
    close(s['p99.9'], 50);
    close(s.min, 2);
    close(s.max, 50);
    close(s.mean, 0.9 * 2 + 0.1 * 50);
    // Population standard deviation of 90 x 2 and 10 x 50: 0.3 * 48.
    close(s.stdev, 14.4);
    expect(Object.keys(s).sort()).toEqual(
      ['count', 'max', 'mean', 'min', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'stdev'].sort(),
    );
  });

  it('reports zeros for an empty histogram', () => {
    expect(latencyStats(newHistogram())).toEqual({
      count: 0,
      p50: 0,
      p75: 0,
      p90: 0,
      p95: 0,
      p99: 0,
      'p99.9': 0,
      min: 0,
      max: 0,
      mean: 0,
      stdev: 0,
    });
  });

  it("mean and stdev are HdrHistogram's own to the bit, from its buckets' median values", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 60_000_000 }), fc.integer({ min: 1, max: 50 })), {
          minLength: 1,
          maxLength: 300,
        }),
        (samples) => {
          const h = newHistogram();
          for (const [value, count] of samples) h.recordValueWithCount(value, count);
          const s = latencyStats(h);
          expect(s.mean).toBe(Math.round(h.mean) / 1000);
          expect(s.stdev).toBe(Math.round(h.stdDeviation) / 1000);
        },
      ),
      { numRuns: 200 },
    );
  });
});
