#!/usr/bin/env node
// Node 22.18 and later run our TypeScript themselves (type stripping: the sources use erasable
// syntax only); Node 20, or a copy under node_modules (where Node will not strip types), goes through
// tsx. src/runtime/typescript.ts makes the same choice for worker threads and scenario files.
const native = Boolean(process.features.typescript) && !import.meta.url.includes('/node_modules/');
if (!native) (await import('tsx/esm/api')).register();
await import('../src/cli/main.ts');
