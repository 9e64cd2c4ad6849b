#!/usr/bin/env node
// build/ is src/ with its types stripped (scripts/build.mjs, run by `npm ci` and `npm pack`): plain
// JavaScript, which starts fastest on any Node, and all an installed package has. In a clone, while
// src/ has changed since (an edit, a checkout), or with PETSTORE_LOAD_SOURCES=1, the sources run as
// they are (ourModule); src/threads/runner.ts makes the same choice for worker threads.
import module from 'node:module';
import { ourModule } from './source-stamp.js';

// Node 22.1 and later keep the code they compiled on disk (NODE_COMPILE_CACHE, else the temporary
// folder) and reuse it at the next start: 20 ms of a 240 ms `--help` on Node 26. Node 20 has none.
module.enableCompileCache?.();

await import(await ourModule('cli/main'));
