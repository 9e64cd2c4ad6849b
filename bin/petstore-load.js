#!/usr/bin/env node
// build/ is src/ with its types stripped (scripts/build.mjs, run by `npm ci`): plain JavaScript,
// which starts fastest on any Node. While src/ has changed since (an edit, a checkout), or with
// PETSTORE_LOAD_SOURCES=1, the sources run as they are: Node 22.18 and later strip their types itself
// (the sources use erasable syntax only); Node 20, or a copy under node_modules (where Node will not
// strip types), goes through tsx. src/runtime/typescript.ts makes the same choice for worker threads
// and scenario files.
import module from 'node:module';
import { buildIsFresh } from './source-stamp.js';

// Node 22.1 and later keep the code they compiled on disk (NODE_COMPILE_CACHE, else the temporary
// folder) and reuse it at the next start: 20 ms of a 240 ms `--help` on Node 26. Node 20 has none.
module.enableCompileCache?.();

if (process.env.PETSTORE_LOAD_SOURCES !== '1' && buildIsFresh()) await import('../build/cli/main.js');
else {
  const native = Boolean(process.features.typescript) && !import.meta.url.includes('/node_modules/');
  if (!native) (await import('tsx/esm/api')).register();
  await import('../src/cli/main.ts');
}
