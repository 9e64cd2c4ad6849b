import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { appendFileAtomic, tryWritableDirectory, writeFileAtomic, writeRefusal } from '../io/atomic-write.ts';
import { renderHtmlReport } from '../report/html.ts';
import type { RunResult } from '../result/types.ts';
import { writeResult } from '../result/write.ts';

/** Where outputs go when no --out is given: one folder per run under it. */
const REPORTS_DIR = 'reports';

/**
 * Writes one of a command's outputs (report, JUnit, markdown, a merged result), atomically. A
 * failure is one line on stderr, in words, and `false`: one bad path must not cost the others.
 */
export function writeOutput(path: string, text: string, what: string, append = false): boolean {
  try {
    if (append) appendFileAtomic(path, text);
    else writeFileAtomic(path, text);
    return true;
  } catch (error) {
    process.stderr.write(`petstore-load: cannot write the ${what} to ${path}: ${writeRefusal(error)}\n`);
    return false;
  }
}

/**
 * result.json in `dir`; when that cannot be written, in $TMPDIR/petstore-load/<name>/, so that a
 * measured run is never lost to a bad --out or a full disk. `path` is where it is (undefined when
 * nowhere), `failed` that it is not where it was asked for. Either way one line on stderr says so.
 */
export function writeResultFile(
  dir: string,
  result: RunResult,
  name: string,
): { path: string | undefined; failed: boolean } {
  try {
    return { path: writeResult(dir, result), failed: false };
  } catch (error) {
    const asked = `cannot write the result to ${join(dir, 'result.json')}: ${writeRefusal(error)}`;
    const fallback = join(tmpdir(), 'petstore-load', name);
    try {
      const path = writeResult(fallback, result);
      process.stderr.write(`petstore-load: ${asked}; it is in ${path}\n`);
      return { path, failed: true };
    } catch (second) {
      process.stderr.write(`petstore-load: ${asked}, nor to ${fallback}: ${writeRefusal(second)}\n`);
      return { path: undefined, failed: true };
    }
  }
}

/**
 * result.json (or its fallback) and report.html beside it, as `capacity` and `bench` write them at
 * their end and on a second signal. `written` says where, a line each; `report` is undefined when
 * it could not be written; `failed`: not all as asked.
 */
export function writeResultAndReport(
  dir: string,
  result: RunResult,
  name: string,
): { path: string | undefined; report: string | undefined; written: string[]; failed: boolean } {
  const { path, failed } = writeResultFile(dir, result, name);
  const report = join(path ? dirname(path) : dir, 'report.html');
  const reported = writeOutput(report, renderHtmlReport(result), 'report');
  const written = [
    ...(path ? [`result written to ${path}`] : []),
    ...(reported ? [`report written to ${report}`] : []),
  ];
  return { path, report: reported ? report : undefined, written, failed: failed || !reported };
}

/** Where a command's outputs go: `--out`, else reports/<name>-<start time>/. */
export function outputDir(out: string | undefined, name: string, result: RunResult): string {
  return resolve(out ?? join(REPORTS_DIR, `${name}-${result.meta.startedAt.replace(/[:.]/g, '-')}`));
}

/** `writeResultAndReport` into `--out`, else reports/<name>-<start time>/: `capacity`'s and `bench`'s outputs. */
export function writeResultAndReportTo(out: string | undefined, name: string, result: RunResult) {
  const dir = outputDir(out, name, result);
  return writeResultAndReport(dir, result, basename(dir));
}

/**
 * Refuses, before anything is started or sent, a directory the outputs cannot go to (`--out`, else
 * reports/): exit 73 in one line, in well under the time a run would spend before finding out. The
 * end's write is still guarded (a disk that fills meanwhile): the result then goes to $TMPDIR.
 */
export function checkOutputDir(out: string | undefined): void {
  const dir = resolve(out ?? REPORTS_DIR);
  try {
    tryWritableDirectory(dir);
  } catch (error) {
    const where = out === undefined ? `the reports folder ${dir}` : `--out ${out}`;
    throw new InputError(
      `cannot write to ${where}: ${writeRefusal(error)}; nothing was started or sent`,
      EXIT.WRITE_FAILED,
    );
  }
}
