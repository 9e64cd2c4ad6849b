import { writeFileAtomic } from '../io/atomic-write.ts';
import type { RunResult } from '../result/types.ts';
import { renderHtmlReport } from './html.ts';

/** Atomically, like result.json: an interrupted write never leaves half a report. */
export function writeHtmlReport(path: string, result: RunResult): void {
  writeFileAtomic(path, renderHtmlReport(result));
}
