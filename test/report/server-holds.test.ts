import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { describeHeldPastEnd, heldMostLine } from '../../src/report/server-holds.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * The server's holds in its own words, as the report and the markdown summary say them beside the
 * terminal's: the line of a paced run its told budget held most of the time, a hold past the run by
 * its cause, and what merge keeps of both.
 */

const IETF = 'RateLimit remaining=0, reset=10';

async function heldFor(ms: number, enforce = true): Promise<RunResult> {
  const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
  result.config.enforce = enforce;
  result.meta.durationSeconds = 10;
  result.compliance.pacingWaitMs = ms;
  result.compliance.budgetWaitMs = ms;
  result.compliance.budgetHold = { ms, fields: IETF };
  return result;
}

describe("a paced run its target's told budget held", () => {
  it('for more than half its time: one line, valid in the result, said in the report and the markdown summary', async () => {
    const result = await heldFor(6_000);
    expect(resultProblem(result)).toBeUndefined();
    const line = heldMostLine(result) as string;
    expect(line).toBe(
      `the target's own fields held the key 6.0 s of the run's 10.0 s (60%): ${IETF}, its told budget spent until its reset; --enforce off if it is a mock that always says 0, else a key of a bigger plan or a longer --duration`,
    );
    expect(renderSummaryMarkdown(result)).toContain(`> ${line}`);
    expect(renderHtmlReport(result)).toContain(`data-held-most>${line.replaceAll("'", '&#39;')}</p>`);
  });

  it('for half its time or less, or in raw mode: no line', async () => {
    expect(heldMostLine(await heldFor(5_000))).toBeUndefined();
    const raw = await heldFor(9_000, false);
    expect(heldMostLine(raw)).toBeUndefined();
    expect(renderHtmlReport(raw)).not.toContain('data-held-most');
  });
});

describe('a hold past the run', () => {
  const until = Date.UTC(2058, 0, 3, 4, 5, 6);
  it('is led by its cause, in the words the server used', () => {
    expect(describeHeldPastEnd({ until, by: IETF, cause: 'budget' })).toBe(
      `held by the server's told budget until 2058-01-03 04:05:06 UTC (${IETF})`,
    );
    expect(describeHeldPastEnd({ until, by: 'Retry-After 12 s', cause: 'pause' })).toMatch(
      /^paused by the server /,
    );
    expect(describeHeldPastEnd({ until, by: 'backoff after 2 refusals', cause: 'pause' })).toMatch(
      /^paused after refusals /,
    );
    expect(describeHeldPastEnd({ until, by: "the plan's quota", cause: 'pacing' })).toMatch(/^held until /);
    // A result written before the cause was kept: read from the words, as before.
    expect(describeHeldPastEnd({ until, by: 'Retry-After 12 s' })).toMatch(/^paused by the server /);
  });
});

describe('merge', () => {
  it('adds the waits under the told budget, and keeps the longest hold with its fields', async () => {
    const a = await heldFor(3_000);
    const b = await heldFor(7_000);
    b.compliance.budgetHold = {
      ms: 7_000,
      fields: 'X-RateLimit-Remaining: 0, X-RateLimit-Reset: 1767000000',
    };
    const merged = mergeResults([a, b]);
    expect(merged.compliance.budgetWaitMs).toBe(10_000);
    expect(merged.compliance.budgetHold).toEqual(b.compliance.budgetHold);
    const none = mergeResults([await syntheticResult([{ op: 'listPets', ms: 5 }])]);
    expect(none.compliance.budgetWaitMs).toBeUndefined();
    expect(none.compliance.budgetHold).toBeUndefined();
  });
});
