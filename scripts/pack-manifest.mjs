// `npm pack` and `npm publish` (prepack): the packed package.json has no `prepare`. npm 11 warns of
// every installed package with an install script "not covered by allowScripts", and counts `prepare`
// as one, although an installed tarball never runs it. The clone keeps it, so that `npm ci` builds
// build/ there. Nor has it `prepack`, which builds from sources the package does not ship (a tool
// that packs the installed package again, as attw does, would fail on it). `strip` keeps the
// manifest as it was beside it; npm reads the packed one again for `postpack`, whose command puts it
// back by itself (it names no file of ours: in the package it finds nothing to do). A pack that
// failed half-way is put back by the next strip, or by `restore`.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const manifest = fileURLToPath(new URL('../package.json', import.meta.url));
const kept = fileURLToPath(new URL('../.package.json.unpacked', import.meta.url));

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

const step = process.argv[2];
if (step === 'restore') {
  restore();
} else if (step === 'strip') {
  restore();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  delete pkg.scripts.prepack;
  writeFileSync(kept, text);
  writeFileSync(`${manifest}.next`, `${JSON.stringify(pkg, null, 2)}\n`);
  renameSync(`${manifest}.next`, manifest);
} else {
  console.error('usage: pack-manifest.mjs strip|restore');
  process.exit(2);
}
