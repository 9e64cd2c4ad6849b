import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic-write.ts';
import type { RunResult } from './types.ts';

/** Writes result.json atomically, so an interrupted write never leaves half a result. */
export function writeResult(dir: string, result: RunResult): string {
  const path = join(dir, 'result.json');
  writeFileAtomic(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}
