import { EXIT } from '../api/exit-codes.ts';
import type { RunConfig } from '../config/run.ts';
import { incomplete } from '../fleet/fleet-result.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';
import { probeResultsOf } from '../scenario/probes.ts';
import { baselineVerdict, compareWithBaseline } from './compare.ts';
import { neverAnsweredLine, noIterationLine, nothingSentLine, storeLostLine } from './run-output.ts';
import { failureLine, formatSummary } from './summary.ts';

/** What a run's end is judged with. */
export interface Ending {
  config: RunConfig;
  abortedBy: ThresholdResult | undefined;
  setupFailure: string | undefined;
}

/**
 * The verdicts (thresholds, probes, baseline) joined to the result before anything is written, so
 * that result.json, JUnit, the summaries and the report all carry them; returns the baseline's
 * comparison in words.
 */
export function judge(result: RunResult, o: Ending): string | undefined {
  const { config, abortedBy } = o;
  const baseline = config.baseline;
  if (config.thresholds.length > 0 && !o.setupFailure) {
    // The threshold that ended the run keeps the verdict it had then: the figures at the end
    // cover less than the run was meant to, and may read better than what stopped it.
    result.thresholds = evaluateThresholds(config.thresholds, result).map((v) =>
      abortedBy && v.expression === abortedBy.expression && v.source === abortedBy.source ? abortedBy : v,
    );
  }
  const probes = probeResultsOf(config.scenario);
  if (probes) result.probes = probes;
  if (!baseline || o.setupFailure) return undefined;
  // The baseline was checked before the run, so this does not fail on it.
  const judged = compareWithBaseline(baseline, result, baseline.maxRegression);
  result.baseline = baselineVerdict(baseline.file, judged.comparison);
  return judged.text;
}

/** The summary printed (or only the path, quiet), and a failing exit's reason on stderr. */
export function tell(
  result: RunResult,
  o: Ending & { exitCode: number; path: string | undefined; lines: string[] },
): number {
  const { exitCode } = o;
  if (!o.config.quiet) console.log([formatSummary(result, o.path), ...o.lines].join('\n').trimEnd());
  else if (o.path) console.log(o.path);
  // Quiet or not, a failing exit says why on stderr, where a CI log shows it.
  const never = neverAnsweredLine(result) ?? storeLostLine(result);
  const why =
    exitCode === EXIT.UNREACHABLE
      ? [never, o.setupFailure, incomplete(result) ? result.meta.interruptedBy : undefined]
          .filter(Boolean)
          .join('; ')
      : exitCode === EXIT.USAGE && o.setupFailure
        ? o.setupFailure
        : exitCode === EXIT.NO_ITERATIONS
          ? (noIterationLine(result) ?? nothingSentLine(result))
          : exitCode === EXIT.THRESHOLDS_FAILED
            ? failureLine(result)
            : undefined;
  if (why) process.stderr.write(`petstore-load: ${why}\n`);
  return exitCode;
}
