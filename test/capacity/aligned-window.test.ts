import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { toldResetSpan } from '../../src/capacity/report/probe-report.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';
import { alignedWindow } from '../helpers/simulated-limiters.ts';

/**
 * `capacity` against a fixed window aligned to the clock, as an API that documents
 * `x-ratelimit-limit/-remaining/-used/-reset` (a Unix time) and refuses an excess with 403 and a
 * JSON message: a key's first request falls anywhere in its window, so the quota comes back sooner
 * than a window after the probe's burst. Its length is the span between the resets it told, window
 * after window, not the time from the probe's own first request (10 per 9.1 s, read before).
 */

const PLAN: Plan = { name: 'free', windows: [{ name: 'ten', limit: 10, seconds: 10 }] };
/** Where in its window the clock stands when the probe starts: early, late, and in between. */
const PHASES_MS = [1000, 4000, 6000, 9000];
const runs = new Map<number, ProbeRun>();

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  for (const phaseMs of PHASES_MS)
    runs.set(
      phaseMs,
      await probeSimulated({ rateLimit: false, seedData: 3 }, PLAN, 1, (u) =>
        alignedWindow(u, { limit: 10, windowMs: 10_000, status: 403, phaseMs }),
      ),
    );
}, 60_000);

describe('a clock-aligned fixed window telling its reset, refusing with 403', () => {
  it.each(PHASES_MS)(
    '%i ms into its window: a fixed window of 10 per 10 s, and the model holds',
    (phaseMs) => {
      const r = (runs.get(phaseMs) as ProbeRun).report;
      const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
      expect(r.limiter.type, why).toBe('fixed-window');
      expect(r.limiter.window, why).toEqual({ limit: 10, seconds: 10 });
      expect(r.limiter.sustainedPerSecond, why).toBe(1);
      expect(r.limiter.refusalStatus).toBe(403);
      expect(r.limiter.check?.refused ?? 0, why).toBe(0);
    },
  );
});

describe('toldResetSpan', () => {
  const s = (...seconds: number[]) => seconds.map((x) => x * 1000);
  it('is the smallest gap between distinct resets when every gap is a whole number of it', () => {
    expect(toldResetSpan(s(100, 110, 110, 130))).toEqual({ toldResetSpanSeconds: 10 });
    expect(toldResetSpan(s(100, 100.4))).toEqual({});
  });
  it("is nothing for windows begun at a key's first request, whose gaps share no span", () => {
    expect(toldResetSpan(s(100, 111, 123))).toEqual({});
    expect(toldResetSpan(s(100))).toEqual({});
  });
});
