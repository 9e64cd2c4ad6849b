import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { contentDigest } from '../../bin/source-stamp.js';

/** What scripts/build.mjs noted of each scenario source it stripped: its content's digest then. */
type Manifest = Record<string, string>;

/**
 * build/scenarios/, when this module runs from build/ (only build/ has a stamp.json at its top);
 * from src/ there is no copy to use.
 */
const BUILT = existsSync(new URL('../stamp.json', import.meta.url))
  ? fileURLToPath(new URL('../scenarios/', import.meta.url))
  : undefined;

/**
 * The stripped copy of a scenario shipped in `scenarios` (scripts/build.mjs), as a URL to import, while
 * every source the copies were made from is as it was: an edited scenario, or an edited file of
 * scenarios/lib that any of them may import, sends them all back to their sources. A scenario the
 * build did not see (one a user added) has no copy.
 */
export function builtScenario(path: string, scenarios: string, built = BUILT): string | undefined {
  if (!built) return undefined;
  const name = relative(scenarios, path);
  if (!name || name.startsWith('..') || isAbsolute(name)) return undefined;
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(built, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (!manifest[name.split(sep).join('/')]) return undefined;
  for (const [file, was] of Object.entries(manifest)) {
    try {
      if (contentDigest(join(scenarios, file)) !== was) return undefined;
    } catch {
      return undefined;
    }
  }
  return pathToFileURL(join(built, name.replace(/\.ts$/, '.js'))).href;
}
