// The sources' stamp: a digest of every entry under src/ (its name, time and size) and of the build
// scripts. scripts/build.mjs writes it into build/; bin/petstore-load.js runs build/ only while src/
// still has the same one, so any edit, checkout or deleted file since sends it back to src/.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = fileURLToPath(new URL('../src/', import.meta.url));
export const BUILD = fileURLToPath(new URL('../build/', import.meta.url));
const SCRIPTS = ['build.mjs', 'relink.mjs'];

export function sourceStamp() {
  const hash = createHash('sha256');
  const entries = readdirSync(SRC, { recursive: true }).sort();
  for (const name of entries) {
    const s = statSync(join(SRC, name));
    hash.update(`${name}\t${s.mtimeMs}\t${s.size}\n`);
  }
  for (const name of SCRIPTS) {
    const script = statSync(fileURLToPath(new URL(`../scripts/${name}`, import.meta.url)));
    hash.update(`${name}\t${script.mtimeMs}\t${script.size}\n`);
  }
  return { digest: hash.digest('hex'), entries: entries.length };
}

/** build/ was made from src/ as it is now. */
export function buildIsFresh() {
  try {
    const built = JSON.parse(readFileSync(join(BUILD, 'stamp.json'), 'utf8'));
    return built.digest === sourceStamp().digest;
  } catch {
    return false;
  }
}

/**
 * The URL of one of our modules to import, as the CLI runs it: build/NAME.js while build/ is fresh
 * (unless PETSTORE_LOAD_SOURCES=1); else src/NAME.ts, which Node 22.18 and later strip themselves,
 * and which Node 20, or a copy under node_modules (where Node will not strip types), runs through tsx
 * (registered here).
 */
export async function ourModule(name) {
  if (process.env.PETSTORE_LOAD_SOURCES !== '1' && buildIsFresh())
    return new URL(`../build/${name}.js`, import.meta.url).href;
  const native = Boolean(process.features.typescript) && !import.meta.url.includes('/node_modules/');
  if (!native) (await import('tsx/esm/api')).register();
  return new URL(`../src/${name}.ts`, import.meta.url).href;
}
