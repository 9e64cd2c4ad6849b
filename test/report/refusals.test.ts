import { beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html.ts';
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
