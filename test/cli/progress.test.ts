import { describe, expect, it } from 'vitest';
import { formatProgress, ProgressLine } from '../../src/cli/progress.ts';
import type { RunTick } from '../../src/scenario/execute.ts';

const tick = (over: Partial<RunTick> = {}): RunTick => ({
  elapsedMs: 12_400,
  durationMs: 30_000,
  requests: 480,
  rate: 40.25,
  rateLimited: 2,
  errors: 1,
  p99Ms: 3.456,
  pacing: { cause: 'pacing', until: 0 },
  snapshot: () => {
    throw new Error('not needed');
  },
  ...over,
});

function fakeStream(isTTY: boolean, columns = 200) {
  const writes: string[] = [];
  const stream = { isTTY, columns, write: (text: string) => writes.push(text) > 0 };
  return { stream: stream as unknown as NodeJS.WriteStream, writes };
}

describe('live status line', () => {
  it('shows elapsed and planned time, rate, p99, counts and what holds traffic back', () => {
    const line = formatProgress(tick());
    expect(line).toMatch(
      /^12s\/30s {2}40\.3 req\/s {2}p99 3\.5 ms {2}480 requests {2}2 429s {2}1 errors {2}pacing to the plan$/,
    );
    expect(formatProgress(tick({ pacing: { cause: 'pause', until: Date.now() + 2000 } }))).toMatch(
      /paused after a refusal \((1\.9|2\.0) s left\)$/,
    );
    // A hold the server made is named in its words: its pause's, its told budget's fields.
    expect(
      formatProgress(tick({ pacing: { cause: 'pause', until: Date.now() + 2000, told: 'Retry-After 2 s' } })),
    ).toMatch(/paused after a refusal \(Retry-After 2 s; (1\.9|2\.0) s left\)$/);
    const budget = formatProgress(
      tick({
        rateLimited: 0,
        pacing: { cause: 'budget', until: Date.now() + 8000, told: 'RateLimit remaining=0, reset=10' },
      }),
    );
    expect(budget).toMatch(
      /held by the server's told budget \(RateLimit remaining=0, reset=10\): (7\.9|8\.0) s left$/,
    );
    expect(budget).not.toMatch(/X-RateLimit|refusal|after a 429/);
    expect(
      formatProgress(
        tick({ pacing: { cause: 'budget', until: Number.POSITIVE_INFINITY, told: 'RateLimit remaining=0' } }),
      ),
    ).toMatch(/\(RateLimit remaining=0\): waiting for an answer$/);
  });

  it("counts a tenant mix's keys by what holds each back, in place of the run's own key", () => {
    const keys = { ready: 1180, pacing: 0, budget: 3, pause: 17, inflight: 0 };
    const line = formatProgress(tick({ keys: () => keys }));
    expect(line).toMatch(/ {2}keys 1180 sending, 3 spent, 17 paused$/);
    // Whole on a terminal of 120 columns (the line is cut to the width, from the end).
    expect(line.length).toBeLessThan(120);
    expect(line).not.toContain('pacing to the plan');
  });

  it('rewrites one line in place on a terminal, cut to its width, and clears it at the end', () => {
    const { stream, writes } = fakeStream(true, 30);
    const progress = new ProgressLine(stream);
    progress.update(tick());
    progress.update(tick({ elapsedMs: 13_000 }));
    expect(writes).toHaveLength(2);
    for (const w of writes) {
      expect(w.startsWith('\r\x1b[2K')).toBe(true);
      expect(w.length - '\r\x1b[2K'.length).toBeLessThanOrEqual(29);
    }
    progress.clear();
    expect(writes[2]).toBe('\r\x1b[2K');
  });

  it('takes a terminal that reports 0 columns as one of unknown width, not as no room', () => {
    const { stream, writes } = fakeStream(true, 0);
    new ProgressLine(stream).update(tick());
    expect(writes[0]).toBe(`\r\x1b[2K${formatProgress(tick())}`);
  });

  it('writes nothing when the stream is not a terminal', () => {
    const { stream, writes } = fakeStream(false);
    const progress = new ProgressLine(stream);
    progress.update(tick());
    progress.clear();
    expect(progress.enabled).toBe(false);
    expect(writes).toEqual([]);
  });
});

describe("a fleet generator's status line", () => {
  it("starts with the fleet's totals, then this generator's own figures", () => {
    const line = formatProgress(tick(), { generators: 3, requests: 1500, rateLimited: 4, errors: 2 });
    expect(line).toMatch(
      /^fleet of 3: 1500 requests 4 429s 2 errors \| this one: 12s\/30s {2}40\.3 req\/s .* pacing to the plan$/,
    );
  });
});
