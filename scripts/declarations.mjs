// The public module's declarations (src/index.ts -> build/index.d.ts and the few files its types
// name), for users' TypeScript: emitted by tsc from our sources, their `.ts` module names made `.js`
// as the build makes the code's, and only the files reachable from index.d.ts kept (the package's
// `exports` reach nothing else). scripts/build.mjs writes them into build/.
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const SPECIFIER = /((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"\n]*?)\.ts\2/g;

/** { 'index.d.ts': text, 'scenario/define.d.ts': text, ... } for the public entry `entry` under `src`. */
export function publicDeclarations(src, entry = 'index.ts') {
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    declaration: true,
    emitDeclarationOnly: true,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    types: ['node'],
    rootDir: src,
    outDir: src,
  };
  const program = ts.createProgram([join(src, entry)], options);
  const emitted = new Map();
  const result = program.emit(undefined, (file, text) => {
    emitted.set(relative(src, file).split(sep).join('/'), text.replace(SPECIFIER, '$1$2$3.js$2'));
  });
  const problems = ts.getPreEmitDiagnostics(program).concat(result.diagnostics);
  if (problems.length > 0) {
    const first = ts.flattenDiagnosticMessageText(problems[0].messageText, '\n');
    throw new Error(`declarations: ${problems.length} problem(s), first: ${first}`);
  }
  // Only what index.d.ts reaches, by its relative imports and re-exports.
  const kept = {};
  const queue = [entry.replace(/\.ts$/, '.d.ts')];
  while (queue.length > 0) {
    const name = queue.pop();
    if (kept[name] !== undefined) continue;
    const text = emitted.get(name);
    if (text === undefined) throw new Error(`declarations: ${name} was not emitted`);
    kept[name] = text;
    // Comments left out: a doc comment's example (`import type { Api } from './api-types.ts'`) names
    // a user's file, not ours.
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '');
    for (const [, , , specifier] of code.matchAll(/((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"\n]*?)\2/g)) {
      const target = relative(src, resolve(dirname(join(src, name)), specifier))
        .split(sep)
        .join('/');
      queue.push(target.replace(/\.js$/, '.d.ts'));
    }
  }
  return kept;
}
