import { dirname, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { InputError } from '../api/input-error.ts';
import { writeHtmlReport } from '../report/write-html.ts';
import type { RunResult } from '../result/types.ts';
import { resultProblem } from '../result/validate.ts';
import { readJsonFile } from './read-json-file.ts';

export function reportOptions(yargs: Argv) {
  return yargs
    .positional('result', {
      type: 'string',
      demandOption: true,
      describe: 'A result.json written by `run`',
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      describe: 'HTML file to write (default: report.html beside the result)',
    })
    .requiresArg(['out']);
}

type ReportArgs = Awaited<ReturnType<typeof reportOptions>['argv']>;

/** Renders a result as one self-contained HTML page (opens offline, requests nothing). */
export async function report(args: ReportArgs): Promise<void> {
  const value = readJsonFile(args.result, 'result');
  const problem = resultProblem(value);
  // A file that is not a result (or of another schema version) would render as a misleading page.
  if (problem) throw new InputError(`result ${args.result}: not a petstore-load result: ${problem}`);
  const out = resolve(args.out ?? join(dirname(args.result), 'report.html'));
  try {
    writeHtmlReport(out, value as RunResult);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only the file system refusing the path is the user's input; anything else is a bug of ours.
    if (!code) throw error;
    throw new InputError(`--out ${out}: cannot write (${code})`);
  }
  console.log(`report written to ${out}`);
}
