import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The house rules that keep src/ readable, held by a test so that a change that breaks one says so:
 * a function over 80 lines is a sign to split it by stage, a file over 450 lines holds several ideas,
 * nothing below the command line reaches up into src/cli, and no module imports itself round a circle.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const MAX_FUNCTION_LINES = 80;
const MAX_FILE_LINES = 450;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const FILES = sourceFiles(SRC).map((path) => {
  const text = readFileSync(path, 'utf8');
  return {
    path,
    name: relative(ROOT, path),
    text,
    source: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true),
  };
});

/** A file `petstore-load types` wrote (src/api/petstore.types.ts): its header says so, and how to write it again. */
const GENERATED = /^\/\/ Generated from .*\n\/\/ {3}petstore-load types /;

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function longFunctions(file: (typeof FILES)[number]): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = file.source.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES) found.push(`${file.name}:${first + 1} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file.source);
  return found;
}

/** Relative imports and re-exports of a file, resolved to paths (static and dynamic `import()`). */
function importsOf(file: (typeof FILES)[number]): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file.source);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file.path), s));
}

const GRAPH = new Map(FILES.map((file) => [file.path, importsOf(file)]));

/** One import circle, as the paths round it, or undefined (a depth-first search's back edge). */
function findCircle(): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const walk = (path: string): string[] | undefined => {
    state.set(path, 'open');
    stack.push(path);
    for (const next of GRAPH.get(path) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next) && GRAPH.has(next)) {
        const circle = walk(next);
        if (circle) return circle;
      }
    }
    stack.pop();
    state.set(path, 'done');
    return undefined;
  };
  for (const path of GRAPH.keys()) {
    if (state.has(path)) continue;
    const circle = walk(path);
    if (circle) return circle.map((p) => relative(ROOT, p));
  }
  return undefined;
}

describe('the house rules of src/', () => {
  it(`no function is over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(FILES.flatMap(longFunctions)).toEqual([]);
  });

  it(`no file is over ${MAX_FILE_LINES} lines (a generated one aside: its length is its document's)`, () => {
    const long = FILES.filter((f) => !GENERATED.test(f.text) && lineCount(f.text) > MAX_FILE_LINES).map(
      (f) => `${f.name} (${lineCount(f.text)})`,
    );
    expect(long).toEqual([]);
  });

  it('nothing outside src/cli imports from src/cli', () => {
    const cli = join(SRC, 'cli');
    const upward = FILES.filter((f) => !f.path.startsWith(`${cli}/`)).flatMap((f) =>
      (GRAPH.get(f.path) ?? [])
        .filter((to) => to.startsWith(`${cli}/`))
        .map((to) => `${f.name} -> ${relative(ROOT, to)}`),
    );
    expect(upward).toEqual([]);
  });

  it('no import circle', () => {
    expect(findCircle()).toBeUndefined();
  });

  it('would see a long function, a long file, an upward import and a circle', () => {
    const text = `import { x } from '../cli/main.ts';\nfunction f() {\n${'  x();\n'.repeat(90)}}\n`;
    const path = join(SRC, 'record', 'made-up.ts');
    const file = {
      path,
      name: 'made-up.ts',
      text,
      source: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true),
    };
    expect(longFunctions(file)).toHaveLength(1);
    expect(lineCount(text)).toBeGreaterThan(MAX_FUNCTION_LINES);
    expect(importsOf(file)).toEqual([join(SRC, 'cli', 'main.ts')]);
    GRAPH.set(path, [path]);
    try {
      expect(findCircle()).toContain('src/record/made-up.ts');
    } finally {
      GRAPH.delete(path);
    }
  });
});
