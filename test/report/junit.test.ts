import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderJUnit } from '../../src/report/junit.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import type { RunResult } from '../../src/result/types.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

let result: RunResult;
beforeAll(async () => {
  result = await syntheticResult([...ladder('listPets', 20), { op: 'listPets', ms: 3, status: 500 }], {
    scenario: 'gate <&> "test"',
  });
  // Hostile text of the kind a server can put in a check sample: markup, entities, control bytes.
  result.checks[0] = {
    ...(result.checks[0] as RunResult['checks'][number]),
    failures: 2,
    samples: [{ operation: 'listPets', status: 200, detail: 'bad <x> & "y" \u0001\u001b[31m |a|', at: 0 }],
  };
  result.thresholds = [
    { expression: 'p99<300ms', source: 'cli', actual: 21, passed: true },
    {
      expression: 'errors<1%',
      source: 'scenario',
      actual: 4.762,
      passed: false,
      detail: 'errors was 4.762%, wanted < 1%',
    },
  ];
});

const parse = (xml: string) =>
  new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (n) => n === 'testsuite' || n === 'testcase',
  }).parse(xml);

describe('JUnit XML', () => {
  it('is well-formed XML whatever the text of the samples', () => {
    const xml = renderJUnit(result);
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toContain('\u0001');
    expect(xml).not.toContain('\u001b');
  });

  it('has a testcase per threshold and per check, failures where they failed', () => {
    const doc = parse(renderJUnit(result));
    const [thresholds, checks] = doc.testsuites.testsuite;
    expect(thresholds.testcase.map((c: { name: string }) => c.name)).toEqual(['p99<300ms', 'errors<1%']);
    expect(thresholds.testcase[0].failure).toBeUndefined();
    expect(thresholds.testcase[1].failure.message).toBe('errors was 4.762%, wanted < 1%');
    expect(thresholds.failures).toBe('1');
    expect(checks.testcase.map((c: { name: string }) => c.name)).toEqual(result.checks.map((c) => c.id));
    const failing = checks.testcase.filter((c: { failure?: unknown }) => c.failure);
    expect(failing.map((c: { name: string }) => c.name)).toEqual(
      result.checks.filter((c) => c.failures > 0).map((c) => c.id),
    );
    expect(failing[0].failure['#text']).toContain('bad <x> & "y"');
    // The result's one verdict is the last case.
    expect(doc.testsuites.tests).toBe(String(2 + result.checks.length + 1));
    expect(doc.testsuites.name).toBe('petstore-load gate <&> "test"');
  });

  it('keeps characters beyond the basic plane, which XML allows', () => {
    const withEmoji = structuredClone(result);
    (withEmoji.checks[0]?.samples[0] as { detail: string }).detail = 'slow 🐢';
    expect(renderJUnit(withEmoji)).toContain('slow 🐢');
  });

  it('has a testcase per regression against a baseline, or one passing when there is none', () => {
    const regressed = {
      ...result,
      baseline: {
        file: 'base.json',
        improvements: 0,
        regressions: [{ operation: 'all', metric: 'p99', baseline: 10, current: 20 }],
      },
    };
    const xml = renderJUnit(regressed);
    expect(XMLValidator.validate(xml)).toBe(true);
    const suites = parse(xml).testsuites.testsuite;
    expect(suites).toHaveLength(4);
    expect(suites[2].testcase[0]).toMatchObject({ name: 'all p99', failure: expect.any(Object) });
    const clean = parse(renderJUnit({ ...regressed, baseline: { ...regressed.baseline, regressions: [] } }));
    expect(clean.testsuites.testsuite[2].testcase[0].name).toBe('no regression against base.json');
    expect(clean.testsuites.testsuite[2].testcase[0].failure).toBeUndefined();
  });

  it('has a testcase per compliance probe, failed where the probe failed', () => {
    const probed = {
      ...result,
      probes: [
        {
          id: 'auth-missing-key',
          description: 'no key',
          expected: '401 Error',
          actual: '401 Error',
          passed: true,
          requests: 1,
          durationMs: 3,
        },
        {
          id: 'invalid-json',
          description: 'a broken body',
          expected: '400 Error',
          actual: '500 Error',
          passed: false,
          detail: 'a server error',
          requests: 1,
          durationMs: 2,
        },
      ],
    };
    const xml = renderJUnit(probed);
    expect(XMLValidator.validate(xml)).toBe(true);
    const probes = parse(xml).testsuites.testsuite[2];
    expect(probes.name).toBe('gate <&> "test" probes');
    expect(probes.testcase.map((c: { name: string }) => c.name)).toEqual([
      'auth-missing-key',
      'invalid-json',
    ]);
    expect(probes.testcase[0].failure).toBeUndefined();
    expect(probes.testcase[1].failure.message).toBe('expected 400 Error; got 500 Error');
    const md = renderSummaryMarkdown(probed);
    expect(md.split('\n')[0]).toMatch(/probes: 1 of 2 failed \(invalid-json\)/);
    expect(md).toContain('| `invalid-json` | 400 Error | 500 Error | ❌ a server error |');
  });

  it('is valid with no thresholds declared', () => {
    const { thresholds: _, ...none } = result;
    const xml = renderJUnit(none as RunResult);
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(parse(xml).testsuites.testsuite[0].tests).toBe('0');
  });
});

describe('markdown summary', () => {
  it('leads with the verdict and keeps tables intact around hostile text', () => {
    const md = renderSummaryMarkdown(result);
    expect(md.split('\n')[0]).toMatch(/❌ .*thresholds: 1 of 2 failed/);
    // '<' is an entity outside code spans: GitHub shows it as '<', never as the start of a tag.
    expect(md).toContain('| `errors<1%` | scenario | 4.762 | ❌ errors was 4.762%, wanted &lt; 1% |');
    // The pipes of the sample are escaped, so its table row keeps its columns.
    expect(md).toContain('\\|a\\|');
    const rows = md.split('\n').filter((l) => l.startsWith('| listPets'));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.split(/(?<!\\)\|/).length).toBe(10);
  });

  it("shows a server's markup as text, and puts regressions against a baseline in the verdict", () => {
    const hostile = structuredClone(result);
    (hostile.checks[0]?.samples[0] as { detail: string }).detail =
      '<img src=x onerror=alert(1)> **bold** `code`';
    const md = renderSummaryMarkdown({
      ...hostile,
      baseline: {
        file: 'base.json',
        improvements: 0,
        regressions: [{ operation: 'listPets', metric: 'p99', baseline: 10, current: 20 }],
      },
    });
    expect(md).not.toContain('<img');
    expect(md).toContain('&lt;img src=x onerror=alert(1)&gt; \\*\\*bold\\*\\* \\`code\\`');
    expect(md.split('\n')[0]).toMatch(
      /❌ .*thresholds: 1 of 2 failed; baseline: 1 regression against base.json/,
    );
    expect(md).toContain('| listPets p99 | 10.00 | 20.00 |');
  });

  it('gives the compliance verdict when no thresholds were declared, and says when all passed', () => {
    const passed = { ...result, thresholds: [result.thresholds?.[0]] } as RunResult;
    expect(renderSummaryMarkdown(passed).split('\n')[0]).toMatch(/✅ .*thresholds: 1 of 1 passed/);
    const { thresholds: _, ...none } = result;
    // None declared: the compliance verdict, part by part (a check failed here).
    const paced = structuredClone(none) as RunResult;
    paced.compliance.quotaUtilization = 0.5;
    const md = renderSummaryMarkdown(paced).split('\n');
    expect(md[0]).toMatch(/❌ .*compliance: 1 of 4 parts failed \(checks\)$/);
    expect(md).toContain('- ✅ violations: 0');
  });
});
