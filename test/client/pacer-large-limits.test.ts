import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/client/pacer.ts';

/** Sends as fast as the pacer allows over `untilMs` of simulated time; returns the send times. */
function drive(pacer: Pacer, untilMs: number): number[] {
  const times: number[] = [];
  let t = 0;
  while (t < untilMs) {
    const { at } = pacer.earliest(t);
    if (at > t) {
      t = at;
      continue;
    }
    const seq = pacer.sent(t);
    pacer.observe(seq, undefined, t);
    times.push(t);
    // Bursts as well as spacing: every few sends, let a little time pass.
    if (times.length % 997 === 0) t += 0.37;
  }
  return times;
}

function maxInSpan(times: number[], spanMs: number): number {
  let max = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while ((times[i] as number) - (times[from] as number) >= spanMs) from++;
    max = Math.max(max, i - from + 1);
  }
  return max;
}

describe('pacing for limits too large for an exact log', () => {
  it('keeps a 200,000-per-10-s quota in every 10 s span, using almost all of it', () => {
    const pacer = new Pacer({
      windows: [{ name: 'w', limit: 200_000, seconds: 10 }],
      enforce: true,
      guardMs: 0,
    });
    const times = drive(pacer, 35_000);
    expect(maxInSpan(times, 10_000)).toBeLessThanOrEqual(200_000);
    // At least 99% of the quota over the run (3.5 windows).
    expect(times.length).toBeGreaterThanOrEqual(0.99 * 200_000 * 3.5);
  });

  it('holds a large window that binds long after the short one', () => {
    // The short window alone would allow 100,000 a second; the large one allows 30,000 a second.
    const pacer = new Pacer({
      windows: [
        { name: 'burst', limit: 1000, seconds: 0.01 },
        { name: 'long', limit: 150_000, seconds: 5 },
      ],
      enforce: true,
      guardMs: 0,
    });
    const times = drive(pacer, 12_000);
    expect(maxInSpan(times, 5000)).toBeLessThanOrEqual(150_000);
    expect(maxInSpan(times, 10)).toBeLessThanOrEqual(1000);
    expect(times.length).toBeGreaterThan(0.95 * 150_000 * (12 / 5));
  });
});
