import { beforeAll, describe, expect, it } from 'vitest';
import { encodeHistogram, newHistogram } from '../../src/record/histogram.ts';
import { escapeHtml, jsonForScript } from '../../src/report/escape.ts';
import { duration } from '../../src/report/format.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { percentileCurve } from '../../src/report/percentile-curve.ts';
import type { QuotaChart } from '../../src/report/quota-chart.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';
import { emptyResult, realRun, THRESHOLDS } from './real-run.ts';

/**
 * The HTML report of a real run (mixed-traffic against the reference server with a header fault),
 * read as text: sections, escaping of hostile strings, no reference to another host, "no data"
 * in place of empty charts, and the thresholds verdict in its three states.
 */

const HOSTILE = '<script>alert(1)</script>';
/** Line separators end a line in older JS engines: inside the data script they must be escaped. */
const HOSTILE_ID = `</script>${HOSTILE}\u2028\u2029<!--`;
const UPLOT_BANNER = '/*! https://github.com/leeoniya/uPlot';

let real: RunResult;
let page: string;

const copy = (patch: (r: RunResult) => void = () => {}): RunResult => {
  const r = structuredClone(real);
  patch(r);
  return r;
};

/** The chart points the page embeds, as its script reads them. */
function embedded(html: string): { charts: { id: string; kind: string; x?: number[]; t?: number[] }[] } {
  const match = html.match(/<script type="application\/json" id="report-data">([^<]*)<\/script>/);
  expect(match, 'the data script is there').not.toBeNull();
  return JSON.parse(match?.[1] as string);
}

/** The attributes of the element carrying `data-chart="id"`. */
function chartTag(html: string, id: string): string {
  const tag = html.match(new RegExp(`<div class="chart" data-chart="${escapeHtml(id)}"[^>]*>`));
  expect(tag, `chart ${id}`).not.toBeNull();
  return tag?.[0] as string;
}

beforeAll(async () => {
  real = await realRun();
  expect(resultProblem(real)).toBeUndefined();
  page = renderHtmlReport(copy((r) => (r.thresholds = THRESHOLDS)));
});

describe('the report of a real run', () => {
  it('has every section, in order', () => {
    const markers = [
      'id="contents"',
      'data-verdict=',
      'id="summary"',
      'id="timeline"',
      'id="latency-by-operation"',
      'id="quota"',
      'id="operations"',
      'id="statuses"',
      'id="checks"',
      'id="latency"',
      'id="configuration"',
    ];
    const at = markers.map((m) => page.indexOf(m));
    for (const [i, m] of markers.entries()) expect(at[i], m).toBeGreaterThan(0);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(page.startsWith('<!doctype html>')).toBe(true);
  });

  it('has a chart per operation with points, the overall one and the timeline', () => {
    const ids = Object.keys(real.operations);
    expect(ids.length).toBeGreaterThanOrEqual(10);
    const charts = embedded(page).charts;
    for (const id of ['latency-overall', ...ids.map((i) => `latency:${i}`), 'timeline', 'timeline:waits']) {
      chartTag(page, id);
      const chart = charts.find((c) => c.id === id);
      expect(chart, id).toBeDefined();
      expect((chart?.x ?? chart?.t ?? []).length, id).toBeGreaterThan(0);
    }
    // Points, not histograms: the base64 of the result stays out of the page.
    expect(page).not.toContain(real.overall.histograms.service);
  });

  it('tables every operation with its badges, status codes and the failing check with its samples', () => {
    for (const [id, op] of Object.entries(real.operations)) {
      const row = page.match(new RegExp(`<tr data-operation="${id}">.*?</tr>`, 's'))?.[0] ?? '';
      expect(row, id).toContain(escapeHtml(op.path));
      if (op.deprecated) expect(row, id).toContain('badge deprecated');
      if (op.stability !== 'stable') expect(row, id).toContain(`>${op.stability}</span>`);
    }
    expect(page).toMatch(/<tr data-operation="getPetById">.*?badge deprecated/s);
    const failing = real.checks.find((c) => c.id === 'ratelimit-remaining-bounds');
    expect(failing?.failures, 'the fault failed its check').toBeGreaterThan(0);
    const samples = page.match(
      /<tr class="failing" data-samples="ratelimit-remaining-bounds">.*?<\/tr>/s,
    )?.[0];
    expect(samples).toBeDefined();
    for (const s of failing?.samples ?? []) expect(samples).toContain(escapeHtml(s.detail));
    expect(page).toContain('data-table="statuses"');
    for (const status of Object.keys(real.overall.statuses)) expect(page).toContain(`>${status}</th>`);
  });

  it('shows the summary figures of the result', () => {
    const passes = real.checks.reduce((n, c) => n + c.passes, 0);
    const failures = real.checks.reduce((n, c) => n + c.failures, 0);
    const card = (id: string) =>
      page.match(new RegExp(`data-card="${id}">.*?<div class="value">([^<]*)</div>`, 's'))?.[1];
    expect(card('requests')).toBe(real.overall.requests.toLocaleString('en-US'));
    expect(card('checks')).toMatch(/%$/);
    expect(Number.parseFloat(card('checks') as string)).toBeCloseTo((100 * passes) / (passes + failures), 0);
    expect(card('violations')).toBe(String(real.compliance.violations));
    expect(Number.parseFloat(card('quota') as string)).toBeCloseTo(real.compliance.quotaUtilization * 100, 0);
  });

  it('shows the run configuration', () => {
    const section = page.slice(page.indexOf('id="configuration"'));
    for (const text of [
      'mixed-traffic',
      real.meta.startedAt,
      real.meta.nodeVersion,
      'constant-vus',
      'time scale</dt><dd>30',
      'browse-pets',
    ])
      expect(section).toContain(text);
  });

  it('calls the wait pacing when paced, and what raw mode waited for when not', () => {
    const config = (p: string) => p.slice(p.indexOf('id="configuration"'), p.indexOf('<footer>'));
    expect(config(page)).toContain('pacing wait</dt>');
    const raw = config(renderHtmlReport(copy((r) => (r.config.enforce = false))));
    expect(raw).not.toContain('pacing wait');
    expect(raw).toContain('ban guard wait (raw mode)</dt>');
    // The server's told budget is its own row, in the fields that told it, apart from pacing.
    const told = config(
      renderHtmlReport(
        copy((r) => {
          r.compliance.pacingWaitMs = 10_000;
          r.compliance.budgetWaitMs = 9_000;
          r.compliance.budgetHold = { ms: 9_000, fields: 'RateLimit remaining=0, reset=10' };
        }),
      ),
    );
    expect(told).toContain(`pacing wait</dt><dd>${duration(1_000)}</dd>`);
    expect(told).toContain(
      `held by the server&#39;s told budget</dt><dd>${duration(9_000)} <span class="muted">(<code>RateLimit remaining=0, reset=10</code>)</span>`,
    );
  });

  it('names the rate-limit dialect detected and the contract, above the checks', () => {
    const checks = page.slice(page.indexOf('id="checks"'), page.indexOf('data-table="checks"'));
    const total = Object.values(real.compliance.headerDialect?.counts ?? {}).reduce((n, c) => n + c, 0);
    expect(total).toBeGreaterThan(0);
    expect(checks).toContain('data-header-dialect="seed" data-contract="seed"');
    expect(checks).toContain(
      `Rate-limit headers: seed (X-RateLimit-*, Reset a Unix time in seconds) on ${total} of ${total} responses; contract seed (kept).`,
    );
    const fastify = renderHtmlReport(
      copy((r) => {
        r.compliance.headerDialect = {
          contract: 'seed',
          detected: 'seconds-until',
          alsoSent: [],
          counts: { 'seconds-until': 40, none: 2 },
        };
        r.config.contract = 'seed';
      }),
    );
    expect(fastify).toContain(
      'Rate-limit headers: seconds-until (X-RateLimit-*, Reset in seconds until the reset) on 40 of 42 responses, none on 2; contract seed: not the dialect detected.',
    );
    expect(fastify.slice(fastify.indexOf('id="configuration"'))).toContain(
      'rate-limit contract</dt><dd>seed',
    );
  });

  it('is self-contained and of a reasonable size', () => {
    expect(page).not.toMatch(/\s(src|srcset|action|poster)\s*=/i);
    // The contents link within the page, and only there.
    expect(page).not.toMatch(/\shref\s*=\s*(?!"#[\w-]+")/i);
    expect(page).toMatch(/\shref="#summary"/);
    expect(page).not.toMatch(/url\(|@import|<link|<img|<iframe|fetch\(/i);
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`);
    expect(Buffer.byteLength(page) / 1024).toBeLessThan(200);
  });

  it('names no other host, except in inert text: the target as text and uPlot’s licence banner', () => {
    const urls = [...page.matchAll(/https?:\/\/[^\s"'<>)]*/g)];
    expect(urls.length).toBeGreaterThan(0);
    for (const m of urls) {
      const url = m[0];
      if (url === 'https://github.com/leeoniya/uPlot') {
        expect(page.slice((m.index as number) - 4, m.index), 'a comment').toBe('/*! ');
        continue;
      }
      expect(url, 'the target, loopback').toBe(real.meta.target);
      expect(new URL(url).hostname).toBe('127.0.0.1');
      // As text of an element, not an attribute value.
      expect(page.slice((m.index as number) - 18, m.index)).toMatch(/>$/);
    }
    expect(page.split(UPLOT_BANNER).length).toBe(2);
  });
});

describe('hostile strings from the result', () => {
  let hostile: string;

  beforeAll(() => {
    const opId = Object.keys(real.operations)[0] as string;
    hostile = renderHtmlReport(
      copy((r) => {
        r.meta.scenario = HOSTILE;
        r.meta.description = `"><img src=x onerror=alert(1)> ${HOSTILE}`;
        r.meta.target = `https://evil.example/${HOSTILE}`;
        const failing = r.checks.find((c) => c.failures > 0);
        (failing?.samples[0] as { detail: string }).detail = `Remaining ${HOSTILE}`;
        r.checks[0]!.rule = HOSTILE;
        r.workload.flows['browse-pets']!.firstError = HOSTILE;
        r.overall.transportErrors[HOSTILE] = 1;
        r.config.workload.executor = HOSTILE;
        r.thresholds = [{ expression: HOSTILE, source: 'cli', actual: 1, passed: false, detail: HOSTILE }];
        // An operation id of a foreign document, in attributes and in the chart data.
        r.operations[HOSTILE_ID] = r.operations[opId]!;
        r.quota![0]!.key = HOSTILE_ID;
      }),
    );
  });

  it('are escaped everywhere', () => {
    expect(hostile).not.toContain(HOSTILE);
    expect(hostile).not.toContain('<img');
    expect(hostile).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(hostile).toContain(escapeHtml(HOSTILE));
    // Only the report's own three script elements (data, uPlot, the page's script).
    expect(hostile.match(/<script/gi)).toHaveLength(3);
    expect(hostile.match(/<\/script/gi)).toHaveLength(3);
  });

  it('reach the page script intact through the escaped JSON', () => {
    const data = hostile.match(/<script type="application\/json" id="report-data">([^<]*)<\/script>/)?.[1];
    expect(data).not.toMatch(/[<>&\u2028\u2029]/);
    expect(embedded(hostile).charts.map((c) => c.id)).toContain(`latency:${HOSTILE_ID}`);
    expect(embedded(hostile).charts.map((c) => c.id)).toContain(`quota:${HOSTILE_ID}`);
  });

  it('a hostile target is text, not a link', () => {
    expect(hostile).toContain('https://evil.example/&lt;script&gt;');
    expect(hostile).not.toMatch(/(href|src)\s*=\s*"?https?:/i);
  });
});

describe('the quota over time', () => {
  type Quota = NonNullable<RunResult['quota']>;
  const sentence = (page: string, key = 'free') =>
    page
      .match(
        new RegExp(`data-quota-key="${escapeHtml(key)}">.*?<p class="quota-sentence">([^<]*)</p>`, 's'),
      )?.[1]
      ?.replace(/\s+/g, ' ');
  const withQuota = (patch: (q: Quota) => void, violations = 0) =>
    renderHtmlReport(
      copy((r) => {
        patch(r.quota as Quota);
        r.compliance.violations = violations;
      }),
    );
  const paused = (q: Quota) => {
    q[0]!.pauses = [
      { from: 0.5, until: 1.2, by: 'retry-after', rateLimited: 2 },
      // Past the run's end (a Retry-After of years): drawn to the end of the chart.
      { from: 2.1, until: 1e9, by: 'retry-after', rateLimited: 1 },
    ];
  };

  it('draws a chart per key with the Remaining announced, the rate, the resets and the pauses', () => {
    const [key] = real.quota ?? [];
    expect(key?.key).toBe('free');
    expect(key?.limit).toBeGreaterThan(0);
    const tag = chartTag(page, 'quota:free');
    expect(tag).not.toContain('data-points');
    const chart = embedded(page).charts.find((c) => c.id === 'quota:free') as unknown as QuotaChart;
    expect(chart.kind).toBe('quota');
    expect(chart.t.length).toBeGreaterThan(key?.points.length as number);
    expect(chart.series.remaining.filter((v) => v !== null).length).toBeGreaterThan(0);
    expect(chart.series.requests.reduce((n, v) => n + v, 0)).toBe(
      key?.points.reduce((n, p) => n + p.requests, 0),
    );
    expect(chart.limit).toBe(key?.limit);
    const resets = key?.points.filter((p) => p.reset).length ?? 0;
    expect(chart.resets).toHaveLength(resets);
    expect(sentence(page)).toMatch(
      new RegExp(`^Remaining as the server announced it, ${resets} window resets?, and (no pause|the)`),
    );
    expect(sentence(withQuota((q) => (q[0]!.pauses = [])))).toBe(
      `Remaining as the server announced it, ${resets === 1 ? '1 window reset' : `${resets} window resets`}, and no pause, since no 429 came.`,
    );
  });

  it('counts the pauses after a 429 and says whether a request left while one held', () => {
    const page = withQuota(paused);
    const chart = embedded(page).charts.find((c) => c.id === 'quota:free') as unknown as QuotaChart;
    const end = chart.t.at(-1) as number;
    expect(chart.pauses).toEqual([
      [0.5, 1.2],
      [2.1, end],
    ]);
    expect(end).toBeLessThanOrEqual(Math.ceil(real.meta.durationSeconds) + 1);
    expect(sentence(page)).toMatch(
      /^Remaining as the server announced it, \d+ window resets?, and the 2 pauses after a 429 \(shaded\): no request left while one held\.$/,
    );
    expect(sentence(withQuota(paused, 3))).toMatch(
      /the 2 pauses after a 429 \(shaded\): 3 requests left while one held \(see compliance violations\)\.$/,
    );
    const dropped = withQuota((q) => {
      paused(q);
      q[0]!.droppedPauses = 1500;
    });
    expect(sentence(dropped)).toMatch(
      /the 1,502 pauses after a 429 \(shaded: the first 2; 1,500 more were not kept\)/,
    );
  });

  it('says the server announced no quota when no response told one', () => {
    const page = withQuota((q) => {
      paused(q);
      delete q[0]!.limit;
      for (const p of q[0]!.points) {
        delete p.remainingMin;
        delete p.remainingLast;
        delete p.reset;
      }
    });
    expect(sentence(page)).toBe(
      'The server announced no quota (no rate-limit headers): the requests per second, and the 2 pauses after a 429 (shaded): no request left while one held.',
    );
    const chart = embedded(page).charts.find((c) => c.id === 'quota:free') as unknown as QuotaChart;
    expect(chart.series.remaining.every((v) => v === null)).toBe(true);
    expect(chart.limit).toBeNull();
  });

  it('has one chart per key, none for a result of an older version, and "no data" for a run without responses', async () => {
    const two = withQuota((q) => q.push({ ...structuredClone(q[0]!), key: 'other-key' }));
    chartTag(two, 'quota:free');
    chartTag(two, 'quota:other-key');
    const old = renderHtmlReport(copy((r) => delete r.quota));
    expect(old).not.toContain('id="quota"');
    expect(embedded(old).charts.some((c) => c.kind === 'quota')).toBe(false);
    const empty = renderHtmlReport(await emptyResult());
    expect(empty).toMatch(
      /id="quota"><h2>Quota over time<\/h2>.*<p class="no-data">no data: the run recorded no response/s,
    );
  });
});

describe('no data', () => {
  it('an operation without responses and an empty timeline say so instead of drawing', () => {
    const empty = encodeHistogram(newHistogram());
    const page = renderHtmlReport(
      copy((r) => {
        const op = r.operations.listPets!;
        Object.assign(op, {
          requests: 0,
          rate: 0,
          statuses: {},
          histograms: { service: empty, response: empty },
        });
        r.timeline = [];
      }),
    );
    for (const id of ['latency:listPets', 'timeline', 'timeline:waits']) {
      expect(chartTag(page, id), id).toContain('data-points="0"');
      expect(page.slice(page.indexOf(chartTag(page, id))).slice(0, 300), id).toMatch(
        /<p class="no-data">no data/,
      );
      const chart = embedded(page).charts.find((c) => c.id === id);
      expect((chart?.x ?? chart?.t ?? [1]).length, id).toBe(0);
    }
    expect(chartTag(page, 'latency:getPetById')).not.toContain('data-points');
  });

  it('a run that recorded nothing renders every section empty, without errors', async () => {
    const result = await emptyResult();
    expect(resultProblem(result)).toBeUndefined();
    const page = renderHtmlReport(result);
    expect(chartTag(page, 'latency-overall')).toContain('data-points="0"');
    expect(chartTag(page, 'timeline')).toContain('data-points="0"');
    expect(page).toContain('no response was recorded');
    expect(page).toContain('<div class="value">–</div>');
    expect(page).toContain('iterations: none completed (0 requests sent)');
    expect(page).toContain('data-verdict="failed"');
  });
});

describe('the verdict banner', () => {
  const banner = (r: RunResult) => renderHtmlReport(r).match(/<section id="verdict">.*?<\/section>/s)?.[0];

  it('none declared: the compliance verdict, red here for the check the header fault fails', () => {
    const b = banner(copy()) as string;
    expect(b).toMatch(/class="banner failed" data-verdict="failed" data-verdict-kind="compliance"/);
    expect(b).toMatch(/FAIL · compliance: \d of 4 parts failed \(checks[,)]/);
    expect(b).toMatch(/data-part="checks" data-passed="false">.*ratelimit-remaining-bounds/);
    expect(b).toContain('violations: 0');
    expect(banner(copy((r) => (r.thresholds = [])))).toContain('data-verdict-kind="compliance"');
    expect(b).not.toContain('nothing to pass or fail');
  });

  it('all passed: green', () => {
    const b = banner(copy((r) => (r.thresholds = [THRESHOLDS[0]!])));
    expect(b).toMatch(/class="banner passed" data-verdict="passed".*thresholds: 1 of 1 passed/s);
    expect(b).toContain('p99&lt;500ms');
  });

  it('some failed: red, naming the failed ones', () => {
    const b = banner(copy((r) => (r.thresholds = THRESHOLDS))) as string;
    expect(b).toMatch(/class="banner failed" data-verdict="failed".*thresholds: 1 of 2 failed/s);
    const failed = b.match(/<li data-part="[^"]*" data-passed="false">.*?<\/li>/gs) ?? [];
    expect(failed.join('')).toContain('checks&gt;99.9%');
    expect(failed.join('')).toContain('97.4% of checks passed, below 99.9%');
    expect(failed.join('')).not.toContain('p99&lt;500ms');
  });

  it('a partial run says so, with what interrupted it', () => {
    const page = renderHtmlReport(
      copy((r) => {
        r.meta.partial = true;
        r.meta.interruptedBy = 'SIGINT';
      }),
    );
    expect(page).toMatch(
      /class="banner partial" data-partial="true">.*partial run.*interrupted by <code>SIGINT<\/code>/s,
    );
    expect(renderHtmlReport(copy())).not.toContain('data-partial');
  });
});

describe('percentile curve and script JSON', () => {
  it('samples the distribution on 1/(1-p) up to the count, ending at the maximum', () => {
    const h = newHistogram();
    for (let ms = 1; ms <= 1000; ms++) h.recordValue(ms * 1000);
    const curve = percentileCurve({ service: encodeHistogram(h), response: encodeHistogram(newHistogram()) });
    expect(curve.x[0]).toBe(1);
    expect(curve.x.at(-1)).toBe(1000);
    expect(curve.x.length).toBeLessThan(50);
    const service = curve.service as number[];
    expect(service[0]).toBeCloseTo(1, 1);
    expect(service.at(-1)).toBeCloseTo(1000, -1);
    for (let i = 1; i < service.length; i++)
      expect(service[i]).toBeGreaterThanOrEqual(service[i - 1] as number);
    // x = 10 is p90, x = 100 is p99.
    expect(service[curve.x.indexOf(10)]).toBeCloseTo(900, -1);
    expect(service[curve.x.indexOf(100)]).toBeCloseTo(990, -1);
    expect(curve.response.every((v) => v === null)).toBe(true);
    const empty = encodeHistogram(newHistogram());
    expect(percentileCurve({ service: empty, response: empty }).x).toEqual([]);
  });

  it('escapes what could end a script element or a line', () => {
    const value = { s: '</script><!-- & \u2028\u2029 >' };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('the banner of a benchmark held back by 429s', () => {
  it('stands before the verdict of a bench result with 429s, and nowhere else', async () => {
    const limited = [...ladder('listPets', 18), ...ladder('listPets', 2, 429)];
    const bench = renderHtmlReport(await syntheticResult(limited, { scenario: 'bench' }));
    expect(bench).toMatch(/data-rate-limited="true"><strong>2 of 20 responses were 429<\/strong>/);
    expect(bench.indexOf('data-rate-limited')).toBeLessThan(bench.indexOf('data-verdict'));
    // A scenario meets 429s by design (raw mode, over-quota bursts): no such banner.
    expect(renderHtmlReport(await syntheticResult(limited, { scenario: 'over-quota-burst' }))).not.toContain(
      'data-rate-limited',
    );
    expect(
      renderHtmlReport(await syntheticResult(ladder('listPets', 20), { scenario: 'bench' })),
    ).not.toContain('data-rate-limited');
  });
});
