import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_TIMELINES_KEPT, OperationTimeline } from '../../src/record/operation-timelines.ts';
import { chartData } from '../../src/report/chart-data.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { mergeOperationTimelines } from '../../src/report/merge-timeline.ts';
import {
  OPERATIONS_SHOWN,
  type OperationLatencyChart,
  operationLatencyCharts,
} from '../../src/report/operation-latency-chart.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type Sample, syntheticResult } from '../helpers/synthetic-result.ts';
import { T0 } from '../helpers/unit-attempt.ts';

/**
 * The per-operation latency over time, from the recorder to the page: each operation's seconds kept
 * in the result (the busiest ten), merged across results, one line per operation on two charts (p99
 * and p50), the busiest five drawn and the rest named. And the cards and columns that say what they
 * count and over which span; and the print stylesheet.
 */

/** Twelve operations, the first the busiest: operation i sends 13 - i requests in seconds 0 and 2 (none in 1). */
const OPS = [
  'listPets',
  'createPet',
  'getPetById',
  'updatePet',
  'deletePet',
  'listCategories',
  'getCategory',
  'listOrders',
  'placeOrder',
  'getOrder',
  'deleteOrder',
  'completeOrder',
];

function samples(): Sample[] {
  const all = OPS.flatMap((op, i) =>
    Array.from({ length: 13 - i }, (_, k) => ({
      op,
      // Service times 1..n ms in second 0 and ten times slower in second 2: a regression to see.
      ms: (k + 1) * (k % 2 === 0 ? 1 : 10),
      at: k % 2 === 0 ? 0.5 : 2.5,
    })),
  );
  // In the order of their arrival, as the client records them.
  return all.sort((a, b) => a.at - b.at);
}

let result: RunResult;

beforeAll(async () => {
  result = await syntheticResult(samples(), { seconds: 4 });
});

describe('the result keeps each operation’s seconds', () => {
  it('for the busiest operations only, valid against the schema', () => {
    expect(resultProblem(result)).toBeUndefined();
    const kept = Object.keys(result.operationTimelines ?? {});
    expect(kept).toEqual(OPS.slice(0, OPERATION_TIMELINES_KEPT));
  });

  it('per second: the requests and the service time p50 and p99 of that second', () => {
    const points = result.operationTimelines?.listPets ?? [];
    expect(points.map((p) => [p.t, p.requests])).toEqual([
      [0, 7],
      [2, 6],
    ]);
    // Second 0 had 1, 3, ..., 13 ms; second 2 had 20, 40, ..., 120 ms.
    expect(points[0]?.p50).toBeCloseTo(7, 1);
    expect(points[0]?.p99).toBeCloseTo(13, 1);
    expect(points[1]?.p99).toBeCloseTo(120, 0);
  });

  it('reads the filling second live, ends it when a later one starts, and counts a late response in the filling one', () => {
    const timeline = new OperationTimeline(T0);
    timeline.add(T0 + 100, 1000);
    timeline.add(T0 + 200, 3000);
    const near = (p: { t: number; requests: number; p50: number; p99: number } | undefined) => [
      p?.t,
      p?.requests,
      Math.round(p?.p50 ?? Number.NaN),
      Math.round(p?.p99 ?? Number.NaN),
    ];
    expect(timeline.snapshot().map(near)).toEqual([[0, 2, 1, 3]]);
    timeline.add(T0 + 1500, 5000);
    timeline.add(T0 + 900, 7000);
    const [first, second] = timeline.snapshot();
    expect(near(first)).toEqual([0, 2, 1, 3]);
    expect(second?.t).toBe(1);
    expect(second?.requests).toBe(2);
    expect(second?.p99).toBeCloseTo(7, 1);
  });

  it('merges results on one clock: a second’s requests add up, the p99 is the largest', () => {
    const a = result.operationTimelines;
    const merged = mergeOperationTimelines(
      [
        { operationTimelines: a, start: T0 },
        { operationTimelines: { listPets: [{ t: 1, requests: 50, p50: 2, p99: 500 }] }, start: T0 + 1000 },
      ],
      T0,
    );
    expect(merged?.listPets?.map((p) => [p.t, p.requests, p.p99])).toEqual([
      [0, 7, a?.listPets?.[0]?.p99],
      [2, 56, 500],
    ]);
    expect(Object.keys(merged ?? {})).toHaveLength(OPERATION_TIMELINES_KEPT);
    expect(mergeOperationTimelines([{ operationTimelines: undefined, start: T0 }], T0)).toBeUndefined();
    // One part written before results kept them: no chart that claims the whole load from the rest.
    expect(
      mergeOperationTimelines(
        [
          { operationTimelines: a, start: T0 },
          { operationTimelines: undefined, start: T0 },
        ],
        T0,
      ),
    ).toBeUndefined();
  });
});

describe('the report’s latency by operation', () => {
  const byId = (id: string) =>
    chartData(result).find((c) => c.id === id) as OperationLatencyChart | undefined;

  it('draws one line per kept operation on a p99 and a p50 chart, the busiest five shown', () => {
    for (const percentile of ['p99', 'p50'] as const) {
      const chart = byId(`latency-by-operation:${percentile}`);
      expect(chart?.lines.map((l) => l.operation)).toEqual(OPS.slice(0, OPERATION_TIMELINES_KEPT));
      expect(chart?.lines.filter((l) => l.shown).map((l) => l.operation)).toEqual(
        OPS.slice(0, OPERATIONS_SHOWN),
      );
      expect(chart?.t).toEqual([0, 1, 2]);
      const listPets = chart?.lines[0];
      // Second 1 had no response of it: a gap, not a zero.
      expect(listPets?.values[1]).toBeNull();
      expect(listPets?.whole).toBe(result.operations.listPets?.service[percentile]);
    }
    expect(byId('latency-by-operation:p99')?.lines[0]?.values[2]).toBeCloseTo(120, 0);
  });

  it('names the operations hidden at first and those left out', () => {
    const page = renderHtmlReport(result);
    const section = page.slice(page.indexOf('<section id="latency-by-operation">'));
    expect(section).toContain('data-chart="latency-by-operation:p99"');
    expect(section).toContain('data-chart="latency-by-operation:p50"');
    const note = section.match(/<p class="muted" data-operation-coverage>(.*?)<\/p>/s)?.[1] ?? '';
    expect(note).toContain(`the ${OPERATIONS_SHOWN} busiest`);
    const hidden = note.slice(note.indexOf('Hidden'), note.indexOf('Left out'));
    for (const id of OPS.slice(OPERATIONS_SHOWN, OPERATION_TIMELINES_KEPT))
      expect(hidden).toContain(`<code>${id}</code>`);
    const left = note.slice(note.indexOf('Left out'));
    for (const id of OPS.slice(OPERATION_TIMELINES_KEPT)) expect(left).toContain(`<code>${id}</code>`);
    expect(note).not.toMatch(/<code>listPets<\/code>/);
  });

  it('says "no data" for a result of an older version, which keeps no operation seconds', () => {
    const older = structuredClone(result);
    delete older.operationTimelines;
    expect(operationLatencyCharts(older).every((c) => c.lines.length === 0 && c.t.length === 0)).toBe(true);
    const page = renderHtmlReport(older);
    expect(page).toMatch(
      /data-chart="latency-by-operation:p99" data-points="0"><p class="no-data">no data: this result keeps no per-operation seconds/,
    );
    expect(page).not.toContain('data-operation-coverage');
  });
});

describe('cards and columns say what they count and over which span', () => {
  it('the requests card splits the load’s requests from setup and teardown’s, and says what was not admitted', async () => {
    const withSetup = structuredClone(result);
    // 4 more requests than the load's (the rate's numerator), as setup and teardown add them.
    withSetup.overall.requests += 4;
    withSetup.compliance.admitted -= 2;
    withSetup.compliance.rateLimited = 2;
    const note = (r: RunResult) =>
      renderHtmlReport(r).match(/data-card="requests">.*?<div class="note">([^<]*)<\/div>/s)?.[1];
    const load = Math.round(result.overall.rate * 4);
    expect(note(result)).toBe(`${load} in the load&#39;s 4 s: all admitted; 0 retries`);
    expect(note(withSetup)).toBe(
      `${load} in the load&#39;s 4 s: ${load - 2} admitted, 2 not (refused by the limiter); 4 in setup and teardown; 0 retries`,
    );
  });

  it('the rate card and the operations’ rate column name the load’s span', () => {
    const page = renderHtmlReport(result);
    expect(page).toMatch(/data-card="rate">.*?<div class="note">over the load&#39;s 4 s; plan allows/s);
    expect(page).toMatch(
      /<th class="num span">rate \(req\/s\)<br><span class="muted">over the load&#39;s 4 s<\/span><\/th>/,
    );
    const row = page.match(/<tr data-operation="listPets">.*?<\/tr>/s)?.[0] ?? '';
    // requests, in the load, rate: all 13 in the load, 13 over 4 s.
    expect(row).toMatch(/<td class="num">13<\/td><td class="num">13<\/td><td class="num">3\.25<\/td>/);
  });

  it('has a print stylesheet that fits the charts to the page and hides what needs a pointer', () => {
    const page = renderHtmlReport(result);
    const print = page.slice(page.indexOf('@media print'));
    expect(print.length).toBeGreaterThan(0);
    expect(page).toContain('@media print');
    expect(print).toMatch(/\.uplot canvas \{[^}]*width: 100% !important/);
    expect(print).toMatch(/break-inside: avoid/);
    expect(print).toMatch(/#contents/);
  });
});
