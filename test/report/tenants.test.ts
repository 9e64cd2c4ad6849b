import { beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html.ts';
import { renderJUnit } from '../../src/report/junit.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import type { RunResult } from '../../src/result/types.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';
import { tier, withTenants } from './tenants-fixture.ts';

/** The tiers of a tenant mix and its isolation verdict in report.html, the step summary and JUnit. */

let plain: RunResult;
const mix = (options: { broken?: boolean } = {}) => withTenants(structuredClone(plain), options);

beforeAll(async () => {
  plain = await syntheticResult(ladder('listPets', 50));
});

/** The row of a table whose first attribute is `attribute="value"`, as text. */
function row(page: string, attribute: string, value: string): string {
  const match = page.match(new RegExp(`<tr ${attribute}="${value}"[^]*?</tr>`));
  expect(match, `${attribute}=${value}`).not.toBeNull();
  return match?.[0] as string;
}

describe('report.html of a tenant mix', () => {
  it('shows the tiers side by side after the summary, the named group marked', () => {
    const page = renderHtmlReport(mix());
    const at = ['id="summary"', 'id="tenants"', 'id="latency"'].map((m) => page.indexOf(m));
    expect(at[1]).toBeGreaterThan(at[0] as number);
    expect(at[2]).toBeGreaterThan(at[1] as number);
    const free = row(page, 'data-tier', 'free');
    expect(free).toContain('198 / 200');
    expect(free).toContain('12,000');
    expect(free).toContain('98%');
    expect(free).toContain('91%');
    expect(free).not.toContain('data-group');
    const abusive = row(page, 'data-tier', 'abusive');
    expect(abusive).toContain('data-group="true"');
    expect(abusive).toMatch(/>group<\/span>.*>raw<\/span>/);
    expect(abusive).toContain('640');
    expect(page.indexOf('data-tier="pro"')).toBeLessThan(page.indexOf('data-tier="abusive"'));
  });

  it('states the isolation verdict with each tier before and after the noisy group', () => {
    const held = renderHtmlReport(mix());
    expect(held).toContain('data-isolation="passed"');
    expect(held).toContain('from 5 s');
    const free = row(held, 'data-isolation-tier', 'free');
    expect(free).toContain('6,000 → 6,000');
    expect(free).toContain('badge pass');
    const broken = renderHtmlReport(mix({ broken: true }));
    expect(broken).toContain('data-isolation="failed"');
    expect(broken).toContain('<span>pro: 37 429s after abusive started (0 before)</span>');
    const pro = row(broken, 'data-isolation-tier', 'pro');
    expect(pro).toContain('class="failing"');
    expect(pro).toContain('0 → 37');
  });

  it('escapes the names of tiers and groups, and has no section without a mix', () => {
    const hostile = mix();
    hostile.byTenantGroup = {
      '<img src=x onerror=alert(1)>': tier('free', { keys: 1, requests: 30, medianMs: 2 }),
    };
    const page = renderHtmlReport(hostile);
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const none = renderHtmlReport(plain);
    expect(none).not.toContain('id="tenants"');
    expect(none).not.toContain('data-isolation');
  });
});

describe('the markdown summary of a tenant mix', () => {
  it('tables the tiers, then the verdict per tier, and puts the verdict in the headline', () => {
    const md = renderSummaryMarkdown(mix({ broken: true }));
    expect(md.split('\n')[0]).toBe(
      '### ❌ petstore-load: synthetic: compliance: 1 of 4 parts failed (429s); isolation broken: pro: 37 429s after abusive started (0 before)',
    );
    expect(md).toContain('| free | 198/200 | 12000 | 1200.0/s |');
    expect(md).toContain('| abusive _(group, raw)_ | 5/5 | 900 |');
    expect(md).toContain('| 98.0% | 91.0% / 98.5% / 100.0% |');
    expect(md).toContain(
      '**Isolation broken** (abusive from 5.0 s): pro: 37 429s after abusive started (0 before)',
    );
    expect(md).toMatch(
      /\| pro \| 2\.\d\d ms → 2\.\d\d ms \| .* \| 0 → 37 \| 0 → 0 \| .* \| ❌ 37 429s after/,
    );
    expect(renderSummaryMarkdown(mix()).split('\n')[0]).toContain('✅');
    const none = renderSummaryMarkdown(plain);
    expect(none).not.toContain('| tier |');
    expect(none).not.toContain('solation');
  });
});

describe('JUnit of a tenant mix', () => {
  it('has a testcase per judged tier, failing where isolation broke', () => {
    const xml = renderJUnit(mix({ broken: true }));
    expect(xml).toContain('<testsuite name="synthetic isolation" tests="2" failures="1"');
    expect(xml).toContain(
      '<testcase name="free beside abusive" classname="synthetic.isolation" time="0"></testcase>',
    );
    expect(xml).toContain('<failure message="37 429s after abusive started (0 before)"');
    expect(renderJUnit(plain)).not.toContain('isolation');
  });
});
