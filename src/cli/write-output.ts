import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes one of a run's secondary outputs (report, JUnit, markdown). A failure is one line on
 * stderr and `false`: the result is written already, and one bad path must not cost the others.
 */
export function writeOutput(path: string, text: string, what: string, append = false): boolean {
  try {
    mkdirSync(dirname(path), { recursive: true });
    if (append) appendFileSync(path, text);
    else writeFileSync(path, text);
    return true;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    process.stderr.write(`petstore-load: ${what} ${path}: cannot write (${reason})\n`);
    return false;
  }
}
