import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunResult } from '../result/types.ts';
import { renderHtmlReport } from './html.ts';

/** Through a temporary file, like result.json: an interrupted write never leaves half a report. */
export function writeHtmlReport(path: string, result: RunResult): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, renderHtmlReport(result));
  renameSync(temporary, path);
}
