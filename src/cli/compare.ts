import { EXIT } from '../api/exit-codes.ts';
import { readJsonFile } from '../config/read-json-file.ts';
import { type Comparison, compareResults } from '../report/compare.ts';
import { formatComparison } from '../report/compare-text.ts';
import { partialReason } from '../report/partial-reason.ts';
import { resultFromJson } from '../report/result-input.ts';
import { parseTolerances } from '../report/tolerances.ts';
import type { BaselineVerdict, RunResult } from '../result/types.ts';
import type { compareOptions } from './command-options.ts';

type CompareArgs = Awaited<ReturnType<typeof compareOptions>['argv']>;

const describeRun = (label: string, path: string, r: RunResult) =>
  `${label} ${path}: ${r.meta.scenario}, ${r.meta.startedAt}, ${r.meta.durationSeconds} s, ${r.overall.requests} requests${r.meta.partial ? ` (partial: ${partialReason(r.meta)})` : ''}`;

/** What a result keeps of a comparison: the regressions that fail it, by name and figures. */
export function baselineVerdict(file: string, comparison: Comparison): BaselineVerdict {
  return {
    file,
    regressions: comparison.rows.flatMap((row) =>
      row.metrics
        .filter((m) => m.verdict === 'regression')
        .map((m) => ({ operation: row.name, metric: m.metric, baseline: m.baseline, current: m.current })),
    ),
    improvements: comparison.improvements,
  };
}

export interface BaselineComparison {
  comparison: Comparison;
  /** The table and the verdict line, ready to print. */
  text: string;
  /** EXIT.THRESHOLDS_FAILED on a regression, else EXIT.OK. */
  exitCode: number;
}

function judge(baseline: RunResult, current: RunResult, maxRegression: string | undefined, header: string[]) {
  const tolerances = parseTolerances(maxRegression);
  const comparison = compareResults(baseline, current, { tolerances });
  return {
    comparison,
    text: [...header, formatComparison(comparison)].join('\n'),
    exitCode: comparison.regressions > 0 ? EXIT.THRESHOLDS_FAILED : EXIT.OK,
  };
}

/**
 * For `run --baseline FILE`: the run just measured against the stored one its configuration read.
 * Prints nothing, so that the caller places the table after its own summary (or leaves it out under
 * --quiet).
 */
export function compareWithBaseline(
  baseline: { file: string; result: RunResult },
  current: RunResult,
  maxRegression?: string,
): BaselineComparison {
  parseTolerances(maxRegression);
  return judge(baseline.result, current, maxRegression, [
    describeRun('baseline', baseline.file, baseline.result),
  ]);
}

export async function compare(args: CompareArgs): Promise<number> {
  // A malformed tolerance fails before any file is read.
  parseTolerances(args.maxRegression);
  const read = (path: string, label: string) => resultFromJson(readJsonFile(path, label), `${label} ${path}`);
  const baseline = read(args.baseline, 'baseline');
  const current = read(args.current, 'current');
  const { text, exitCode } = judge(baseline, current, args.maxRegression, [
    describeRun('baseline', args.baseline, baseline),
    describeRun('current ', args.current, current),
  ]);
  console.log(text);
  return exitCode;
}
