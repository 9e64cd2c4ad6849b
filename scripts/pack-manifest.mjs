// `npm pack` and `npm publish` (prepack, after the build): the packed package.json has no `prepare`.
// npm 11 warns of every installed package with an install script "not covered by allowScripts", and
// counts `prepare` as one, although an installed tarball never runs it. The clone keeps it, so that
// `npm ci` builds build/ there. Nor has it `prepack`, which builds from sources the package does not
// ship (a tool that packs the installed package again, as attw does, would fail on it).
//
// `strip` notes the two scripts beside the manifest (.package.json.unpacked) and removes them; npm
// reads the manifest again for `postpack`, which calls `restore` (in the package, where this file is
// not, it finds nothing to do). `restore` puts the noted scripts back into package.json as it is then,
// never an old copy over it: a pack that failed half-way, restored by the next strip, loses no edit
// made since.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MANIFEST = fileURLToPath(new URL('../package.json', import.meta.url));
const NOTED = fileURLToPath(new URL('../.package.json.unpacked', import.meta.url));
const STRIPPED = ['prepare', 'prepack'];

function write(pkg) {
  writeFileSync(`${MANIFEST}.next`, `${JSON.stringify(pkg, null, 2)}\n`);
  renameSync(`${MANIFEST}.next`, MANIFEST);
}

export function restore() {
  if (!existsSync(NOTED)) return;
  const { scripts: noted, order } = JSON.parse(readFileSync(NOTED, 'utf8'));
  const pkg = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  const scripts = { ...noted, ...pkg.scripts };
  // In the order they were: a restored manifest is the same file, byte for byte.
  const known = order.filter((name) => name in scripts);
  const added = Object.keys(scripts).filter((name) => !order.includes(name));
  pkg.scripts = Object.fromEntries([...known, ...added].map((name) => [name, scripts[name]]));
  write(pkg);
  rmSync(NOTED);
}

export function strip() {
  restore();
  const pkg = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  const noted = Object.fromEntries(STRIPPED.filter((s) => s in pkg.scripts).map((s) => [s, pkg.scripts[s]]));
  writeFileSync(NOTED, `${JSON.stringify({ scripts: noted, order: Object.keys(pkg.scripts) })}\n`);
  for (const name of STRIPPED) delete pkg.scripts[name];
  write(pkg);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const step = process.argv[2];
  if (step === 'strip') strip();
  else if (step === 'restore') restore();
  else {
    console.error('usage: pack-manifest.mjs strip|restore');
    process.exit(2);
  }
}
