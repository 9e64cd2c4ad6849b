import { resolve } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import { readJsonFile } from '../config/read-json-file.ts';
import { mergeResults } from '../report/merge.ts';
import { partialReason } from '../report/partial-reason.ts';
import { resultFromJson } from '../report/result-input.ts';
import type { mergeOptions } from './command-options.ts';
import { writeOutput } from './write-output.ts';

type MergeArgs = Awaited<ReturnType<typeof mergeOptions>['argv']>;

export async function merge(args: MergeArgs): Promise<number> {
  const files = (args.files ?? []).map(String);
  if (args.fleet !== undefined) {
    if (files.length > 0)
      throw new InputError('merge: --fleet takes its results from the store; name no files with it');
    return (await import('./merge-fleet.ts')).mergeFleet(args.fleet, args.out);
  }
  if (files.length === 0) throw new InputError('merge: name at least one result file, or --fleet STORE/NAME');
  const results = files.map((file) => resultFromJson(readJsonFile(file, 'merge'), `merge ${file}`));
  const merged = mergeResults(
    results,
    files.map((file) => `merge ${file}`),
  );
  const path = resolve(args.out);
  if (!writeOutput(path, `${JSON.stringify(merged, null, 2)}\n`, 'merged result')) return EXIT.WRITE_FAILED;
  console.log(`merged ${results.length} result${results.length === 1 ? '' : 's'} into ${path}`);
  // A partial part makes a partial whole: which parts, and why, where a person reads it.
  results.forEach((r, i) => {
    if (r.meta.partial) console.log(`partial: ${files[i]}: ${partialReason(r.meta)}`);
  });
  return EXIT.OK;
}
