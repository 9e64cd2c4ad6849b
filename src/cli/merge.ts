import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { InputError } from '../api/input-error.ts';
import { mergeResults } from '../report/merge.ts';
import { resultFromJson } from '../report/result-input.ts';
import type { RunResult } from '../result/types.ts';
import { EXIT } from './exit-codes.ts';
import { readJsonFile } from './read-json-file.ts';

/** Options of `merge <files..>` (the command string must name the positional `files`). */
export function mergeOptions(yargs: Argv) {
  return yargs
    .positional('files', {
      type: 'string',
      array: true,
      describe: 'Result files (result.json) of the runs or workers to merge',
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      demandOption: true,
      describe: 'File to write the merged result to',
    })
    .requiresArg(['out']);
}

type MergeArgs = Awaited<ReturnType<typeof mergeOptions>['argv']>;

/** Through a temporary file, as write.ts does: an interrupted write never leaves half a result. */
function writeJson(path: string, result: RunResult): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(result, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    throw new InputError(
      `--out ${path}: cannot write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

export async function merge(args: MergeArgs): Promise<number> {
  const files = (args.files ?? []).map(String);
  if (files.length === 0) throw new InputError('merge: name at least one result file');
  const results = files.map((file) => resultFromJson(readJsonFile(file, 'merge'), `merge ${file}`));
  const merged = mergeResults(
    results,
    files.map((file) => `merge ${file}`),
  );
  const path = resolve(args.out);
  writeJson(path, merged);
  console.log(`merged ${results.length} result${results.length === 1 ? '' : 's'} into ${path}`);
  return EXIT.OK;
}
