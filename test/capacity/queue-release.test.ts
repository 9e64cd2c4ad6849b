import { describe, expect, it } from 'vitest';
import { strayRelease } from '../../src/capacity/discover/concurrency.ts';
import type { ProbeReply } from '../../src/capacity/probe-client.ts';

/**
 * The rule by which the capacity probe takes late answers for a queue's releases, on simulated
 * numbers: a queue spaces every answer by its interval; a busy machine's pause holds answers and then
 * lets them go together, or one late among quick ones.
 */

/** Admitted answers received at these times (ms), in that order. */
const answered = (times: number[]): ProbeReply[] =>
  times.map((receivedAt, index) => ({ index, receivedAt }) as unknown as ProbeReply);

const intervalOf = (r: ProbeReply[]) =>
  ((r.at(-1) as ProbeReply).receivedAt - (r[0] as ProbeReply).receivedAt) / (r.length - 1);

describe('strayRelease', () => {
  it("passes a queue's releases, its timers late by a few ms (nginx 2r/s burst=5 on a busy machine)", () => {
    const r = answered([0.4, 503, 1001, 1507, 2004, 2512]);
    expect(strayRelease(r, intervalOf(r))).toBeUndefined();
    // 20 a second: releases 50 ms apart, each within 15 ms of it.
    const fast = answered([0.3, 52, 98, 151, 212, 249]);
    expect(strayRelease(fast, intervalOf(fast))).toBeUndefined();
  });

  it('finds the gap a pause leaves: quick answers a step apart, then those it held, together', () => {
    // Requests 2 ms apart on a quick loopback; a pause of 150 ms held the last three.
    const r = answered([0.3, 2.4, 4.3, 6.5, 158, 158.4, 158.9]);
    expect(strayRelease(r, intervalOf(r))).toBeDefined();
  });

  it('finds one answer late among quick ones', () => {
    const r = answered([0.3, 2.4, 4.3, 140]);
    expect(strayRelease(r, intervalOf(r))).toBeDefined();
  });
});
