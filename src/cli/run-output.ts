import { dirname, join, resolve } from 'node:path';
import { formatInstant } from '../api/duration.ts';
import { EXIT } from '../api/exit-codes.ts';
import { answeredCount, describeTransportErrors } from '../record/errors.ts';
import { renderHtmlReport } from '../report/html.ts';
import { renderJUnit } from '../report/junit.ts';
import { workloadSentNothing } from '../report/run-span.ts';
import { describeHeldPastEnd } from '../report/server-holds.ts';
import { renderSummaryMarkdown } from '../report/summary-md.ts';
import type { RunResult } from '../result/types.ts';
import { describeTlsFailures } from '../transport/tls-failure.ts';
import { exitCodeOf } from './session.ts';
import { outputDir, writeOutput, writeResultFile } from './write-output.ts';

export interface OutputOptions {
  scenario: string;
  /** `--out`, else reports/<scenario>-<time>/. */
  out?: string;
  junit?: string;
  summaryMd?: string;
  /** False: no JUnit or summaries (a fleet's shard: its CI outputs are the fleet's verdict's). */
  ci?: boolean;
}

/** Where a run's result goes: `--out`, else reports/<scenario>-<start time>/. */
export function resultDir(result: RunResult, o: OutputOptions): string {
  return outputDir(o.out, o.scenario, result);
}

/**
 * Writes result.json, report.html and the CI outputs asked for, each atomically. Never loses a
 * measured run to a bad --out or a full disk: the result then goes to $TMPDIR/petstore-load/ and a
 * line says so. `failed` is true when any file could not be written where it was asked for; `path`
 * is undefined when the result could be written nowhere.
 */
export function writeRunOutputs(
  result: RunResult,
  o: OutputOptions,
): { path: string | undefined; written: string[]; failed: boolean } {
  const dir = resultDir(result, o);
  const stamp = result.meta.startedAt.replace(/[:.]/g, '-');
  const { path, failed: resultFailed } = writeResultFile(dir, result, `${o.scenario}-${stamp}`);
  const report = join(path ? dirname(path) : dir, 'report.html');
  const reported = writeOutput(report, renderHtmlReport(result), 'report');
  const ci = writeCiOutputs(result, o);
  return {
    path,
    written: [...(reported ? [`report written to ${report}`] : []), ...ci.written],
    failed: resultFailed || !reported || ci.failed,
  };
}

/** JUnit and the markdown summaries asked for: what a CI step reads of a run (or of its fleet). */
export function writeCiOutputs(result: RunResult, o: OutputOptions): { written: string[]; failed: boolean } {
  if (o.ci === false) return { written: [], failed: false };
  let failed = false;
  const written: string[] = [];
  const output = (file: string, text: string, what: string, append = false) => {
    if (writeOutput(file, text, what, append)) written.push(`${what} written to ${file}`);
    else failed = true;
  };
  if (o.junit) output(resolve(o.junit), renderJUnit(result), 'JUnit XML');
  if (o.summaryMd || process.env.GITHUB_STEP_SUMMARY) {
    const markdown = renderSummaryMarkdown(result);
    if (o.summaryMd) output(resolve(o.summaryMd), markdown, 'markdown summary');
    if (process.env.GITHUB_STEP_SUMMARY)
      output(process.env.GITHUB_STEP_SUMMARY, markdown, 'step summary', true);
  }
  return { written, failed };
}

/**
 * The line a run that never got one HTTP answer ends with (exit 3), or undefined when some answer
 * came: a silent target must not pass for a slow one.
 */
export function neverAnsweredLine(result: RunResult): string | undefined {
  const { overall } = result;
  if (overall.requests === 0 || answeredCount(overall) > 0) return undefined;
  const requests = `${overall.requests} request${overall.requests === 1 ? '' : 's'}`;
  // A TLS failure is said in words with the flag that addresses it, not as a code among others.
  const tls = describeTlsFailures(overall.transportErrors);
  if (tls) return `the target never answered over TLS (${requests}): ${tls}`;
  const errors = describeTransportErrors(overall.transportErrors);
  return `the target never answered: ${requests}${errors ? `, ${errors}` : ''}`;
}

/**
 * The line a run whose shared quota store went away and never came back ends with (exit 3): it sent
 * nothing without the store, so it did not do its job, whatever its figures say.
 */
export function storeLostLine(result: RunResult): string | undefined {
  const lost = result.compliance.storeOutages?.find((o) => o.to === undefined);
  if (!lost) return undefined;
  return `quota store ${result.meta.sharedQuota ?? ''} unreachable from ${lost.from.toFixed(1)} s to the end of the run: ${lost.held} request${lost.held === 1 ? '' : 's'} held, none sent without it`.replace(
    'store  ',
    'store ',
  );
}

/**
 * The line a run whose workload completed no iteration ends with (exit 5), saying why where the
 * client knows: the server's told budget held the key, or a pause outlived the run. Undefined when
 * one completed.
 */
export function noIterationLine(result: RunResult): string | undefined {
  if (result.workload.iterations > 0) return undefined;
  const c = result.compliance;
  const past = c.heldPastEnd;
  const why: string[] = [];
  if (c.budgetHold) {
    // The budget that held it and outlived it is one hold: said once, with until when.
    const until = past?.cause === 'budget' ? ` and past its end, until ${formatInstant(past.until)}` : '';
    why.push(
      `the server's told budget held the key ${(c.budgetHold.ms / 1000).toFixed(1)} s of it${until} (${c.budgetHold.fields})`,
    );
  }
  if (past && !(c.budgetHold && past.cause === 'budget')) why.push(describeHeldPastEnd(past));
  const requests = `${result.overall.requests} request${result.overall.requests === 1 ? '' : 's'} sent`;
  return `no iteration completed in ${result.meta.durationSeconds.toFixed(1)} s (${requests}): ${why.length > 0 ? why.join('; ') : 'no flow finished within the run'}`;
}

/**
 * The line a run whose workload sent no request ends with (exit 5, as for no iteration: its figures
 * measure nothing of the target), though its iterations completed: flows that call nothing, or
 * whose calls were all held. Undefined when one was sent, or when no iteration completed (that line
 * says it). Setup's and teardown's requests are not the workload's.
 */
export function nothingSentLine(result: RunResult): string | undefined {
  if (!workloadSentNothing(result)) return undefined;
  const n = result.workload.iterations;
  const around = result.overall.requests > 0 ? ` (setup and teardown sent ${result.overall.requests})` : '';
  return `the workload sent no request in ${result.meta.durationSeconds.toFixed(1)} s${around}: its ${n} iteration${n === 1 ? '' : 's'} completed without one, so the run measured nothing of the target`;
}

/**
 * The run's exit code, most telling first: an interruption (the user's word), a target that never
 * answered, a setup that failed, a workload that completed no iteration, a failed gate (thresholds,
 * baseline, probes), a file not written.
 */
export function runExitCode(
  result: RunResult,
  how: { interrupted: boolean; setupFailed: boolean; writeFailed: boolean },
): number {
  const gateFailed =
    result.thresholds?.some((t) => !t.passed) ||
    result.baseline?.regressions.length ||
    result.probes?.some((p) => !p.passed) ||
    // A noisy neighbour that hurt the compliant tenants is a failed verdict like a threshold's.
    result.isolation?.passed === false;
  const failure =
    neverAnsweredLine(result) || storeLostLine(result)
      ? EXIT.UNREACHABLE
      : how.setupFailed
        ? EXIT.USAGE
        : noIterationLine(result) || nothingSentLine(result)
          ? EXIT.NO_ITERATIONS
          : gateFailed
            ? EXIT.THRESHOLDS_FAILED
            : undefined;
  return exitCodeOf({ interrupted: how.interrupted, failure, writeFailed: how.writeFailed });
}
