import { dirname, join, resolve } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { readJsonFile } from '../config/read-json-file.ts';
import { renderHtmlReport } from '../report/html.ts';
import { partialReason } from '../report/partial-reason.ts';
import { resultFromJson } from '../report/result-input.ts';
import type { reportOptions } from './command-options.ts';
import { writeOutput } from './write-output.ts';

type ReportArgs = Awaited<ReturnType<typeof reportOptions>['argv']>;

/** Renders a result as one self-contained HTML page (opens offline, requests nothing). */
export async function report(args: ReportArgs): Promise<number> {
  // A file that is not a result (another schema version, a damaged histogram) would render as a
  // misleading page: refused here, in one line.
  const value = resultFromJson(readJsonFile(args.result, 'result'), `result ${args.result}`);
  const out = resolve(args.out ?? join(dirname(args.result), 'report.html'));
  if (!writeOutput(out, renderHtmlReport(value), 'report')) return EXIT.WRITE_FAILED;
  console.log(`report written to ${out}`);
  if (value.meta.partial) console.log(`partial: ${args.result}: ${partialReason(value.meta)}`);
  return EXIT.OK;
}
