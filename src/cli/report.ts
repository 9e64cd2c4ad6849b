import { dirname, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { InputError } from '../api/input-error.ts';
import { resultFromJson } from '../report/result-input.ts';
import { writeHtmlReport } from '../report/write-html.ts';
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
  // A file that is not a result (another schema version, a damaged histogram) would render as a
  // misleading page: refused here, in one line.
  const value = resultFromJson(readJsonFile(args.result, 'result'), `result ${args.result}`);
  const out = resolve(args.out ?? join(dirname(args.result), 'report.html'));
  try {
    writeHtmlReport(out, value);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only the file system refusing the path is the user's input; anything else is a bug of ours.
    if (!code) throw error;
    throw new InputError(`--out ${out}: cannot write (${code})`);
  }
  console.log(`report written to ${out}`);
}
