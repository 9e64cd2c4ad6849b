import { describe, expect, it } from 'vitest';
import { fitSlowDown, SLOW_DOWN_POINTS, SlowDownWatch } from '../../src/capacity/discover/slow-down.ts';
import {
  familyWithRefusals,
  refusalsCountEvidence,
  refusedWithinWindow,
} from '../../src/capacity/discover/window-refusals.ts';
import type { ProbeReply, Shot } from '../../src/capacity/probe-client.ts';

/** Latencies of requests one after another: `base` each, plus (i - threshold) * step past the threshold. */
const line = (n: number, threshold: number, step: number, base = 3) =>
  Array.from({ length: n }, (_, i) => base + Math.max(0, i + 1 - threshold) * step);

describe('fitSlowDown', () => {
  it('finds the threshold and the step of a delay that grows by the same step per request', () => {
    expect(fitSlowDown(line(9, 5, 100))).toMatchObject({ threshold: 5, delayPerRequestMs: 100, points: 4 });
    expect(fitSlowDown(line(6, 1, 250))).toMatchObject({ threshold: 1, delayPerRequestMs: 250 });
  });

  it('tolerates jitter and a slow first answer, not a server slow at random or slow alike', () => {
    const jittered = line(10, 3, 50).map((l, i) => l + [4, -2, 6, 0, -5, 3, 7, -1, 2, 0][i]!);
    jittered[0] = 80;
    expect(fitSlowDown(jittered)).toMatchObject({ threshold: 3 });
    expect(fitSlowDown([200, 201, 199, 200, 202, 200, 198])).toBeNull();
    expect(fitSlowDown([5, 90, 10, 150, 20, 60, 140, 8])).toBeNull();
    // Too few past the threshold to call it a line.
    expect(fitSlowDown(line(7, 5, 100))).toBeNull();
  });

  it('lets one answer in eight stray (a burst that opened a connection on a busy machine), not two', () => {
    const one = line(9, 5, 100);
    one[2] = (one[2] as number) + 60;
    expect(fitSlowDown(one)).toMatchObject({ threshold: 5, points: 4 });
    const two = [...one];
    two[6] = (two[6] as number) + 60;
    expect(fitSlowDown(two)).toBeNull();
  });
});

describe('SlowDownWatch', () => {
  const reply = (index: number, latency: number, remaining?: number): ProbeReply => ({
    index,
    status: 200,
    kind: 'admitted',
    sentAt: index * 1000,
    receivedAt: index * 1000 + latency,
    rateLimit: { limit: undefined, remaining, reset: undefined },
    retryAfterMs: undefined,
    hasRetryAfter: false,
    code: undefined,
    admittedSoFar: index,
  });

  it('stops once the growth is measured, a few requests past the threshold', () => {
    const watch = new SlowDownWatch(5000);
    const latencies = line(20, 5, 100);
    let sent = 0;
    while (!watch.observe(reply(sent + 1, latencies[sent] as number))) sent++;
    expect(sent + 1).toBe(5 + SLOW_DOWN_POINTS);
    expect(watch.result()).toMatchObject({ threshold: 5, delayPerRequestMs: 100 });
    expect(watch.evidence()[0]).toMatch(/delays rather than refuses/);
  });

  it('stops on an answer held past its bound, and says why', () => {
    const watch = new SlowDownWatch(1000);
    expect(watch.observe(reply(1, 5))).toBe(false);
    expect(watch.observe(reply(2, 1500))).toBe(true);
    expect(watch.result()).toBeNull();
    expect(watch.evidence()[0]).toMatch(/held 1495 ms/);
  });

  it('ignores answers that tell a Remaining (several in flight at once)', () => {
    const watch = new SlowDownWatch(1000);
    for (let i = 1; i <= 12; i++) expect(watch.observe(reply(i, i * 500, 3))).toBe(false);
    expect(watch.result()).toBeNull();
  });
});

describe('a window that counts refusals', () => {
  const back = { sentAt: 20_000 } as ProbeReply;
  const shots: Shot[] = [
    { at: 0, admitted: true },
    { at: 9_000, admitted: false },
    { at: 12_000, admitted: false },
    { at: 19_000, admitted: false },
    { at: 20_000, admitted: true },
    { at: 20_001, admitted: false },
  ];

  it('counts the refusals within a window before the return, none after it', () => {
    expect(refusedWithinWindow(shots, back, 10_000)).toBe(2);
    expect(refusedWithinWindow(undefined, back, 10_000)).toBe(0);
  });

  it('a return short by exactly the refusals is a window, and says refusals count', () => {
    expect(familyWithRefusals(8, 10, 2)).toBe('window');
    expect(refusalsCountEvidence(8, 10, 2)).toMatch(/counts refused requests too/);
    // A bucket gives back one at a time, whatever it refused.
    expect(familyWithRefusals(1, 10, 2)).toBe('spacing');
    expect(refusalsCountEvidence(1, 10, 2)).toBeNull();
    expect(refusalsCountEvidence(10, 10, 2)).toBeNull();
    expect(familyWithRefusals(10, 10, 0)).toBe('window');
    // nginx's limit_req without a burst: one admitted at once, one back, refusals or not.
    expect(familyWithRefusals(1, 1, 3)).toBe('spacing');
    // More than the limit with the refusals: they were not all counted, the shortfall is another's.
    expect(familyWithRefusals(5, 10, 7)).toBe('spacing');
  });
});
