import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.ts';
import type { CheckResult } from '../../src/record/checks/tally.ts';
import { mergeChecks } from '../../src/report/merge-records.ts';
import { checksSection } from '../../src/report/sections/checks.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';

/** Responses the document promised nothing of (`--contract document`): counted, and said so everywhere. */

const check = (id: string, passes: number, notDeclared?: number): CheckResult => ({
  id,
  rule: 'r',
  source: 's',
  passes,
  failures: 0,
  samples: [],
  ...(notDeclared === undefined ? {} : { notDeclared }),
});

describe('responses not declared by the document', () => {
  it('the result keeps the count; the summary and the report say it; merge adds it up', async () => {
    const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    const present = result.checks.find((c) => c.id === 'ratelimit-headers-present') as CheckResult;
    present.notDeclared = 7;
    expect(resultProblem(result)).toBeUndefined();

    expect(formatSummary(result, 'result.json')).toContain(
      'not declared by the document (not judged): ratelimit-headers-present on 7 responses',
    );
    const html = String(checksSection(result));
    expect(html).toContain('data-not-declared="7"');
    expect(html).toContain('7 responses not judged: the document declares nothing of it for their status');

    const merged = mergeChecks([
      [check('ratelimit-headers-present', 3, 2)],
      [check('ratelimit-headers-present', 1)],
      [check('ratelimit-headers-present', 0, 5)],
    ]);
    expect(merged[0]).toMatchObject({ passes: 4, notDeclared: 7 });
    expect(mergeChecks([[check('a', 1)], [check('a', 2)]])[0]?.notDeclared).toBeUndefined();
  });

  it('a check that met only undeclared responses reads "not declared", not "not evaluated"', async () => {
    const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    result.checks = [check('ratelimit-headers-present', 0, 3), check('ratelimit-remaining-bounds', 0)];
    const html = String(checksSection(result));
    const row = (id: string) => html.slice(html.indexOf(`data-check="${id}"`)).split('</tr>')[0] as string;
    expect(row('ratelimit-headers-present')).toContain('>not declared<');
    expect(row('ratelimit-remaining-bounds')).toContain('>not evaluated<');
    expect(formatSummary(result, 'result.json')).not.toContain('ratelimit-remaining-bounds on');
  });
});
