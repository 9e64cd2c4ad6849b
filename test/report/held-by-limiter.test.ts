import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.ts';
import {
  encodeHistogram,
  type LatencyStats,
  latencyStats,
  newHistogram,
} from '../../src/record/histogram.ts';
import { describeHeldByLimiter } from '../../src/report/held-by-limiter.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { type HeldPart, mergeHeldByLimiter } from '../../src/report/merge-records.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import type { HeldByLimiterSeen } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type Sample, syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * A queue's answers, as one user sees them behind it: the first at once (2 ms, the service's own),
 * each later one released 500 ms after the one before, having waited 1.5 s.
 */
const queued = (count: number): Sample[] =>
  Array.from({ length: count }, (_, i) => ({ op: 'listPets', ms: i === 0 ? 2 : 1500, at: 2 + i * 0.5 }));

describe('held responses from the recorder to the summary, the report and merge', () => {
  it('are in the result, valid against the schema, and named in one line by the summary and the report', async () => {
    const result = await syntheticResult(queued(20), { seconds: 15 });
    const held = result.compliance.heldByLimiter;
    expect(resultProblem(result)).toBeUndefined();
    const { unheld, unheldHistogram, ...figures } = held ?? ({} as HeldByLimiterSeen);
    expect(figures).toEqual({
      responses: 19,
      totalMs: 19 * 1498,
      longestMs: 1498,
      kind: 'queue',
      queued: 19,
      slowed: 0,
      intervalMs: 500,
    });
    // The one answer not held, the first: its 2 ms alone.
    expect([unheld?.count, unheld?.p50, unheld?.p99]).toEqual([1, 2, 2]);
    expect(unheldHistogram).toMatch(/^[A-Za-z0-9+/=]+$/);
    const line =
      "19 responses held by the target's limiter (a queue releasing 2/s): 28.5 s in all, 1.5 s the longest — latency beyond the service's own, included in the latency percentiles; without them, service p50 2 ms, p99 2 ms";
    expect(formatSummary(result, undefined).split('\n')).toContain(line);
    expect(renderSummaryMarkdown(result).split('\n')).toContain(line);
    expect(renderHtmlReport(result)).toContain(
      `<p class="muted" data-held-by-limiter>${line.replaceAll("'", '&#39;')}</p>`,
    );
  });

  it('are absent from a result, its summary and its report when nothing was held', async () => {
    const result = await syntheticResult(
      Array.from({ length: 20 }, (_, i) => ({ op: 'listPets', ms: 2, at: 2 + i * 0.5 })),
    );
    expect(result.compliance.heldByLimiter).toBeUndefined();
    expect(formatSummary(result, undefined)).not.toContain('held by');
    expect(renderHtmlReport(result)).not.toContain('data-held-by-limiter');
    expect(renderSummaryMarkdown(result)).not.toContain('held by');
  });

  it('merge: counts and holds summed, the longest kept, the kind and interval read again', async () => {
    const [a, b] = await Promise.all([
      syntheticResult(queued(20), { seconds: 15 }),
      syntheticResult(queued(10), { seconds: 15 }),
    ]);
    const merged = mergeResults([a, b]);
    const {
      unheld,
      unheldHistogram: _,
      ...figures
    } = merged.compliance.heldByLimiter ?? ({} as HeldByLimiterSeen);
    expect(figures).toEqual({
      responses: 28,
      totalMs: 28 * 1498,
      longestMs: 1498,
      kind: 'queue',
      queued: 28,
      slowed: 0,
      intervalMs: 500,
    });
    expect([unheld?.count, unheld?.max]).toEqual([2, 2]);
    expect(resultProblem(merged)).toBeUndefined();
  });

  it('mergeHeldByLimiter: a queue in one part and a slow-down in another make both; a part that held none adds all its service time', () => {
    const queue = seen(
      {
        responses: 30,
        totalMs: 45_000,
        longestMs: 1500,
        kind: 'queue',
        queued: 30,
        slowed: 0,
        intervalMs: 500,
      },
      [2, 3],
    );
    const slowDown = seen(
      {
        responses: 12,
        totalMs: 7800,
        longestMs: 1200,
        kind: 'slow-down',
        queued: 0,
        slowed: 10,
        stepMs: 100,
      },
      [4],
    );
    const none = latencies([1, 1, 1, 1]);
    const merged = mergeHeldByLimiter([
      part(queue),
      { held: undefined, service: none.stats, serviceHistogram: none.encoded, where: 'result 2' },
      part(slowDown),
      part({ ...queue, intervalMs: 250 }),
    ]);
    const { unheld, unheldHistogram: _, ...figures } = merged ?? ({} as HeldByLimiterSeen);
    expect(figures).toEqual({
      responses: 72,
      totalMs: 97_800,
      longestMs: 1500,
      kind: 'both',
      queued: 60,
      slowed: 10,
      intervalMs: 375,
      stepMs: 100,
    });
    // 2 and 3 ms twice, 4 ms once, and the four 1 ms answers of the part that held none.
    expect([unheld?.count, unheld?.min, unheld?.p50, unheld?.max]).toEqual([9, 1, 2, 4]);
    expect(
      mergeHeldByLimiter([
        { held: undefined, service: none.stats, serviceHistogram: none.encoded, where: 'x' },
      ]),
    ).toBeUndefined();
    expect(describeHeldByLimiter(merged as HeldByLimiterSeen)).toBe(
      "72 responses held by the target's limiter (a queue releasing 2.7/s for 60, a slow-down adding 100 ms a request for 10): 97.8 s in all, 1.5 s the longest — latency beyond the service's own, included in the latency percentiles; without them, service p50 2 ms, p99 4 ms",
    );
    expect(() => mergeHeldByLimiter([part({ ...queue, unheldHistogram: 'bm90IGEgaGlzdG9ncmFt' })])).toThrow(
      /^result: compliance.heldByLimiter.unheldHistogram: not an HdrHistogram/,
    );
  });

  it('says so when no window told which kind held the one response', () => {
    const one = seen(
      { responses: 1, totalMs: 640, longestMs: 640, kind: 'unknown', queued: 0, slowed: 0 },
      [],
    );
    expect(describeHeldByLimiter(one)).toBe(
      "1 response held by the target's limiter (a queue or a slow-down, not told which): 640 ms in all, 640 ms the longest — latency beyond the service's own, included in the latency percentiles; every response was held",
    );
  });
});

/** Service times (ms) as a result keeps them: statistics and the encoded histogram. */
function latencies(ms: number[]): { stats: LatencyStats; encoded: string } {
  const h = newHistogram();
  for (const m of ms) h.recordValue(m * 1000);
  return { stats: latencyStats(h), encoded: encodeHistogram(h) };
}

function seen(
  figures: Omit<HeldByLimiterSeen, 'unheld' | 'unheldHistogram'>,
  unheldMs: number[],
): HeldByLimiterSeen {
  const { stats, encoded } = latencies(unheldMs);
  return { ...figures, unheld: stats, unheldHistogram: encoded };
}

const part = (held: HeldByLimiterSeen): HeldPart => ({
  held,
  service: latencies([]).stats,
  serviceHistogram: latencies([]).encoded,
  where: 'result',
});
