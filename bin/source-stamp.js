// Which of our code the CLI runs. An installed package ships build/ alone (package.json's `files`):
// what is shipped is what runs, and nothing is hashed. In a clone, build/ runs while it was made from
// src/ as it is now: a digest of every entry under src/ (its name and content) and of the build
// scripts, which scripts/build.mjs writes into build/. File times decide nothing: a checkout, a copy
// or npm's tarball (every time 1985-10-26) changes them without changing a byte.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = fileURLToPath(new URL('../src/', import.meta.url));
export const BUILD = fileURLToPath(new URL('../build/', import.meta.url));
const SCRIPTS = ['build.mjs', 'relink.mjs', 'declarations.mjs'];

export function sourceStamp() {
  const hash = createHash('sha256');
  const entries = readdirSync(SRC, { recursive: true }).sort();
  for (const name of entries) {
    const path = join(SRC, name);
    hash.update(`${name}\n`);
    if (statSync(path).isFile()) hash.update(readFileSync(path));
  }
  for (const name of SCRIPTS) {
    hash.update(`${name}\n`);
    hash.update(readFileSync(fileURLToPath(new URL(`../scripts/${name}`, import.meta.url))));
  }
  return { digest: hash.digest('hex'), entries: entries.length };
}

/** A file's content digest (a shipped scenario's, against its stripped copy's manifest). */
export function contentDigest(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Our code ships without its sources: an installed package (or a copy made from one). */
export function installed() {
  return !existsSync(SRC);
}

/** build/ is what should run: shipped alone, or made from src/ as it is now. */
export function buildIsFresh() {
  try {
    const built = JSON.parse(readFileSync(join(BUILD, 'stamp.json'), 'utf8'));
    return installed() || built.digest === sourceStamp().digest;
  } catch {
    return false;
  }
}

/**
 * The URL of one of our modules to import, as the CLI runs it: build/NAME.js while build/ is fresh
 * (unless PETSTORE_LOAD_SOURCES=1 in a clone); else src/NAME.ts, which Node 22.18 and later strip
 * themselves, and which Node 20 runs through tsx (a devDependency of the clone, registered here).
 */
export async function ourModule(name) {
  if (installed() || (process.env.PETSTORE_LOAD_SOURCES !== '1' && buildIsFresh()))
    return new URL(`../build/${name}.js`, import.meta.url).href;
  if (!process.features.typescript) (await import('tsx/esm/api')).register();
  return new URL(`../src/${name}.ts`, import.meta.url).href;
}
