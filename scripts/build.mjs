// `npm run build` (and npm's `prepare`, after `npm ci`): src/ with its types stripped, to build/, so
// that the CLI, its worker threads and its embedded server start on plain JavaScript on any Node: no
// tsx and no type stripping at each start (on Node 26 stripping alone cost a start 130 ms and 16 MB,
// tsx on Node 20 more). bin/petstore-load.js runs build/ while it is as new as src/ (the stamp), and
// src/ otherwise. build/ sits beside src/, so a path relative to a source file
// (`../../package.json`) means the same from either.
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { BUILD, sourceStamp, SRC as src } from '../bin/source-stamp.js';

const out = BUILD.replace(/\/$/, '');
const next = `${out}.next-${process.pid}`;

const stamp = sourceStamp();
const files = readdirSync(src, { recursive: true }).filter((f) => statSync(join(src, f)).isFile());
const result = await build({
  entryPoints: files.filter((f) => f.endsWith('.ts')).map((f) => join(src, f)),
  outdir: next,
  outbase: src,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  write: false,
  logLevel: 'silent',
});
rmSync(next, { recursive: true, force: true });
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  // Our relative module names end in .ts (imports, import(), new URL('./worker-thread.ts')): here .js.
  writeFileSync(file.path, file.text.replace(/(['"])(\.\.?\/[^'"\n]*?)\.ts\1/g, '$1$2.js$1'));
}
for (const f of files.filter((f) => !f.endsWith('.ts'))) {
  mkdirSync(dirname(join(next, f)), { recursive: true });
  copyFileSync(join(src, f), join(next, f));
}
writeFileSync(join(next, 'stamp.json'), `${JSON.stringify(stamp)}\n`);
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
console.log(`build/: ${result.outputFiles.length} modules from src/`);
