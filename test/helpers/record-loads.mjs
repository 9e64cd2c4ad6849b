// `node --import` this file (or NODE_OPTIONS=--import=...): every module URL the process, its
// worker threads and children load is appended to $PETSTORE_LOADS, one a line, so that a test can
// read which modules a command loaded from the module graph itself, not from a list of imports.
import { appendFileSync } from 'node:fs';
import * as module from 'node:module';

const out = process.env.PETSTORE_LOADS;
if (out) {
  // Node 22.15 and later hook in this thread; Node 20 only through a hooks thread.
  if (typeof module.registerHooks === 'function')
    module.registerHooks({
      load(url, context, next) {
        appendFileSync(out, `${url}\n`);
        return next(url, context);
      },
    });
  else module.register('./record-loads-hooks.mjs', import.meta.url, { data: out });
}
