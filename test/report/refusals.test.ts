import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html.ts';
import { renderJUnit } from '../../src/report/junit.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import type { RunResult } from '../../src/result/types.ts';
import { ladder, mixedRefusals, syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * Every output names the limiter's refusals by status when one was not a 429 (the 429 figures count
 * them all), and says what a bare 503 or a bare 403 after admissions may be; a run of 429s alone
 * reads as it always did.
 */

let mixed: RunResult;
let only429: RunResult;

beforeAll(async () => {
  mixed = await mixedRefusals();
  only429 = await syntheticResult([...ladder('listPets', 18), ...ladder('listPets', 2, 429)]);
});

const card = (page: string, id: string) =>
  page.match(new RegExp(`data-card="${id}">.*?</div>\\s*</div>`, 's'))?.[0] ?? '';

describe('the HTML report', () => {
  it('names the statuses of the refusals on the card and heads the column refused', () => {
    const page = renderHtmlReport(mixed);
    const rate = card(page, 'rate-limited');
    expect(rate).toContain('<div class="label">refusal rate</div>');
    expect(rate).toContain('<div class="note">15 responses: 429: 12, 503: 3</div>');
    const operations = page.slice(
      page.indexOf('id="operations"'),
      page.indexOf('</table>', page.indexOf('id="operations"')),
    );
    expect(operations).toContain('<th class="num">refused</th>');
    expect(operations).toContain("Refused counts the limiter's refusals in every status (429: 12, 503: 3).");
  });

  it('says what the bare 503s and the bare 403 after admissions may be, with the flag that counts them', () => {
    const page = renderHtmlReport(mixed);
    expect(page).toContain(
      '<p class="muted" data-refusal-note="unexplained"><strong>503 unexplained: 2</strong> — no Retry-After, no rate-limit field, no problem type: a headerless limiter (nginx limit_req answers 503 by default) or an overloaded target; kept away from as refusals; <code>--refusal-status 503</code> counts them as the limiter&#39;s.</p>',
    );
    expect(page).toContain(
      '<p class="muted" data-refusal-note="forbidden-after-admitted"><strong>403 after admissions: 1</strong> — a key the limiter admitted turned to bare 403s, as a limiter refusing with 403 does; <code>--refusal-status 403</code> counts them as the limiter&#39;s refusals.</p>',
    );
    // Inside the summary, after its cards.
    const summary = page.slice(
      page.indexOf('id="summary"'),
      page.indexOf('</section>', page.indexOf('id="summary"')),
    );
    expect(summary).toContain('data-refusal-note="unexplained"');
  });

  it('names the statuses in the banner of a benchmark, and the flag given in the configuration', async () => {
    const bench = await mixedRefusals({ scenario: 'bench' });
    bench.config.refusalStatuses = [403];
    const page = renderHtmlReport(bench);
    expect(page).toMatch(
      /<strong>15 of 38 responses were the limiter&#39;s refusals \(429: 12, 503: 3\)<\/strong>/,
    );
    expect(page).toContain(
      '<dt>refusal statuses</dt><dd>429, 403 <span class="muted">(<code>--refusal-status</code>)</span></dd>',
    );
  });

  it("keeps today's wording when every refusal was a 429, and for an older result without the fields", () => {
    const older = structuredClone(only429);
    delete older.compliance.refusals;
    for (const result of [only429, older]) {
      const page = renderHtmlReport(result);
      const rate = card(page, 'rate-limited');
      expect(rate).toContain('<div class="label">429 rate</div>');
      expect(rate).toContain('<div class="note">2 responses</div>');
      expect(page).toContain('<th class="num">429s</th>');
      expect(page).not.toMatch(/data-refusal-note|refusal statuses|>refused</);
    }
  });
});

/** The testcases of a JUnit document by name, each with its failure's text and its system-out. */
function junitCases(xml: string): Map<string, { failure?: string; out?: string }> {
  expect(XMLValidator.validate(xml)).toBe(true);
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'testcase' }).parse(xml);
  const cases = new Map<string, { failure?: string; out?: string }>();
  for (const suite of [doc.testsuites.testsuite].flat())
    for (const c of suite.testcase ?? [])
      cases.set(c['@_name'], { failure: c.failure?.['#text'], out: c['system-out'] });
  return cases;
}

const THRESHOLDS: RunResult['thresholds'] = [
  { expression: 'rate_limited<50%', source: 'cli', actual: 39.5, passed: true },
  {
    expression: 'listPets:rate_limited<1%',
    source: 'scenario',
    actual: 39.5,
    passed: false,
    detail: 'rate_limited was 39.5%, wanted < 1%',
  },
  { expression: 'p99<300ms', source: 'cli', actual: 20, passed: true },
];

describe('the JUnit output', () => {
  it('names the statuses and the notes where a 429 rate or the refusals are judged, and nowhere else', () => {
    const cases = junitCases(renderJUnit({ ...mixed, thresholds: THRESHOLDS }));
    const told = [
      'refusals by status: 429: 12, 503: 3',
      "503 unexplained: 2 — no Retry-After, no rate-limit field, no problem type: a headerless limiter (nginx limit_req answers 503 by default) or an overloaded target; kept away from as refusals; --refusal-status 503 counts them as the limiter's",
      "403 after admissions: 1 — a key the limiter admitted turned to bare 403s, as a limiter refusing with 403 does; --refusal-status 403 counts them as the limiter's refusals",
    ].join('\n');
    expect(cases.get('rate_limited<50%')).toEqual({ failure: undefined, out: told });
    expect(cases.get('listPets:rate_limited<1%')?.failure).toBe(
      `listPets:rate_limited<1% (scenario): rate_limited was 39.5%, wanted < 1%\n${told}`,
    );
    // The check that fails on a refusal in another status: its samples, then what was counted.
    expect(cases.get('refusal-is-429')?.failure).toMatch(
      /refused with 503, not 429[\s\S]*\nrefusals by status: 429: 12, 503: 3\n503 unexplained: 2/,
    );
    expect(cases.get('p99<300ms')).toEqual({ failure: undefined, out: undefined });
    expect(cases.get('retry-after-on-429')?.failure).not.toContain('refusals by status');
  });

  it('adds nothing when every refusal was a 429 and none was counted apart', () => {
    const xml = renderJUnit({ ...only429, thresholds: THRESHOLDS });
    expect(xml).not.toMatch(/system-out|refusals by status|unexplained|after admissions/);
  });
});

describe('the markdown summary', () => {
  it('heads the column refused, names the statuses, and says what the bare 503s and 403 may be', () => {
    const md = renderSummaryMarkdown(mixed);
    expect(md).toContain('| requests | rate | p50 | p95 | p99 | refused | errors |');
    expect(md).toMatch(/\| 15 \(39\.5%; 429: 12, 503: 3\) \|/);
    expect(md).toContain('| operation | requests | rate | p50 | p99 | refused | errors | checks failed |');
    expect(md).toContain(
      "> **503 unexplained: 2** — no Retry-After, no rate-limit field, no problem type: a headerless limiter (nginx limit\\_req answers 503 by default) or an overloaded target; kept away from as refusals; `--refusal-status 503` counts them as the limiter's.",
    );
    expect(md).toContain(
      "> **403 after admissions: 1** — a key the limiter admitted turned to bare 403s, as a limiter refusing with 403 does; `--refusal-status 403` counts them as the limiter's refusals.",
    );
  });

  it("keeps today's wording when every refusal was a 429", () => {
    const md = renderSummaryMarkdown(only429);
    expect(md).toContain('| requests | rate | p50 | p95 | p99 | 429s | errors |');
    expect(md).toMatch(/\| 2 \(10\.0%\) \|/);
    expect(md).not.toMatch(/refused|unexplained|after admissions/);
  });
});

describe('merge', () => {
  it('adds the refusals by status, the bare 503s and the bare 403s after admissions', async () => {
    const other = structuredClone(mixed);
    other.compliance.refusals = { 403: 4, 429: 1 };
    other.compliance.rateLimited = 5;
    delete other.compliance.unexplained;
    const first = structuredClone(mixed);
    first.config.refusalStatuses = [503];
    other.config.refusalStatuses = [403];
    const merged = mergeResults([first, other]);
    expect(merged.compliance.refusals).toEqual({ 403: 4, 429: 13, 503: 3 });
    expect(Object.keys(merged.compliance.refusals ?? {})).toEqual(['403', '429', '503']);
    expect(merged.compliance.unexplained).toBe(2);
    expect(merged.compliance.forbiddenAfterAdmitted).toBe(2);
    expect(merged.config.refusalStatuses).toEqual([403, 503]);
  });

  it("counts an older part's refusals as its 429s, and leaves absent what every part lacks", () => {
    const older = structuredClone(only429);
    delete older.compliance.refusals;
    const withOlder = mergeResults([mixed, older]);
    expect(withOlder.compliance.refusals).toEqual({ 429: 14, 503: 3 });
    expect(withOlder.compliance.rateLimited).toBe(17);
    const olderOnly = mergeResults([older, structuredClone(older)]);
    expect(olderOnly.compliance).not.toHaveProperty('refusals');
    expect(olderOnly.compliance).not.toHaveProperty('unexplained');
    expect(olderOnly.compliance).not.toHaveProperty('forbiddenAfterAdmitted');
    expect(olderOnly.config).not.toHaveProperty('refusalStatuses');
    expect(mergeResults([only429, only429]).compliance.refusals).toEqual({ 429: 4 });
  });

  it('reads a status named __proto__ in a hostile file as a status, not as a prototype', () => {
    const hostile = structuredClone(mixed);
    hostile.compliance.refusals = JSON.parse('{"__proto__": 1, "429": 2}');
    const merged = mergeResults([hostile]);
    expect(Object.getPrototypeOf(merged.compliance.refusals)).toBe(Object.prototype);
    expect(Object.hasOwn(merged.compliance.refusals ?? {}, '__proto__')).toBe(true);
  });
});
