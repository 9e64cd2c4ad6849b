import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from './types.ts';

/** Writes result.json through a temporary file, so an interrupted write never leaves half a result. */
export function writeResult(dir: string, result: RunResult): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'result.json');
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(temporary, path);
  return path;
}
