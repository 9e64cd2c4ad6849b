import { describe, expect, it } from 'vitest';
import { runExitCode, storeLostLine } from '../../src/cli/run-output.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { mergeStoreOutages } from '../../src/report/merge-records.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

const NOT_INTERRUPTED = { interrupted: false, setupFailed: false, writeFailed: false };

describe('a shared quota store that went away, in the result and its outputs', () => {
  it('names a bridged outage in the summary and the report, and the run exits as it would have', async () => {
    const result = await syntheticResult(ladder('listPets', 20));
    result.meta.sharedQuota = 'redis://127.0.0.1:6379';
    result.compliance.storeOutages = [{ from: 8, to: 11.25, held: 12, sentWithout: 0, resumed: 'server' }];
    expect(resultProblem(result)).toBeUndefined();
    const line =
      "quota store unreachable 8.0 s to 11.3 s: 0 requests sent without it, 12 held; pacing resumed from the server's Remaining";
    expect(formatSummary(result, 'result.json')).toContain(line);
    expect(renderHtmlReport(result)).toContain(line.replace("'", '&#39;'));
    expect(storeLostLine(result)).toBeUndefined();
    expect(runExitCode(result, NOT_INTERRUPTED)).toBe(0);
  });

  it('a store that never came back fails the run with exit 3 and one line, whatever its figures', async () => {
    const result = await syntheticResult(ladder('listPets', 20));
    result.meta.sharedQuota = 'redis://127.0.0.1:6379';
    result.compliance.storeOutages = [{ from: 6, held: 1, sentWithout: 0 }];
    expect(resultProblem(result)).toBeUndefined();
    expect(storeLostLine(result)).toBe(
      'quota store redis://127.0.0.1:6379 unreachable from 6.0 s to the end of the run: 1 request held, none sent without it',
    );
    expect(runExitCode(result, NOT_INTERRUPTED)).toBe(3);
    expect(renderHtmlReport(result)).toMatch(
      /class="store-outage failing">quota store unreachable from 6\.0 s/,
    );
  });

  it('merges the spells that shards saw of one outage into one, and keeps it open if any shard never saw it end', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const merged = mergeStoreOutages(
      [
        { outages: [{ from: 8, to: 11, held: 5, sentWithout: 0, resumed: 'server' }], start: t0 },
        // Started half a second later, saw the same outage from 7.6 s of its own clock.
        { outages: [{ from: 7.6, to: 11.2, held: 7, sentWithout: 0, resumed: 'held' }], start: t0 + 500 },
        { outages: [{ from: 20, held: 1, sentWithout: 0 }], start: t0 },
      ],
      t0,
    );
    expect(merged).toEqual([
      { from: 8, to: 11.7, held: 12, sentWithout: 0, resumed: 'server' },
      { from: 20, held: 1, sentWithout: 0 },
    ]);
  });

  it('merge joins the outages of two shard results', async () => {
    const a = await syntheticResult(ladder('listPets', 10));
    const b = await syntheticResult(ladder('listPets', 10));
    a.compliance.storeOutages = [{ from: 2, to: 4, held: 3, sentWithout: 0, resumed: 'intact' }];
    b.compliance.storeOutages = [{ from: 2.5, held: 2, sentWithout: 0 }];
    const merged = mergeResults([a, b]);
    expect(merged.compliance.storeOutages).toEqual([{ from: 2, held: 5, sentWithout: 0 }]);
    expect(runExitCode(merged, NOT_INTERRUPTED)).toBe(3);
  });
});
