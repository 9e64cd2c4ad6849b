// The sources' stamp: every entry under src/ and the newest change among them. scripts/build.mjs
// writes it into build/; bin/petstore-load.js runs build/ only while src/ still has the same one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = fileURLToPath(new URL('../src/', import.meta.url));
export const BUILD = fileURLToPath(new URL('../build/', import.meta.url));

export function sourceStamp() {
  let newest = 0;
  let entries = 0;
  for (const name of readdirSync(SRC, { recursive: true })) {
    newest = Math.max(newest, statSync(join(SRC, name)).mtimeMs);
    entries++;
  }
  return { newest, entries };
}

/** build/ was made from src/ as it is now (an edit, a checkout or a deleted file since: not). */
export function buildIsFresh() {
  try {
    const built = JSON.parse(readFileSync(join(BUILD, 'stamp.json'), 'utf8'));
    const now = sourceStamp();
    return built.entries === now.entries && now.newest <= built.newest;
  } catch {
    return false;
  }
}
