import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NormalizedProblem } from '@redocly/openapi-core';
import { InputError } from './input-error.ts';
import type { OpenApiDocument } from './openapi-document.ts';
import { buildOperationTable, type Operation } from './operations.ts';

/** Our own document: the reference server serves it and the load side reads it unless given `--spec`. */
export const DEFAULT_SPEC_PATH = fileURLToPath(new URL('./petstore.openapi.yaml', import.meta.url));
/** The same document as JSON (`npm run spec:json`), read at each start: no YAML parser, no OpenAPI parser. */
export const BUILT_IN_SPEC_JSON = fileURLToPath(new URL('./petstore.openapi.json', import.meta.url));

/** The OpenAPI versions a document may be written in. */
export const OPENAPI_VERSIONS = ['3.0', '3.1', '3.2'] as const;

export interface LoadedSpec {
  /** Where it came from, for messages. */
  source: string;
  /** Validated and dereferenced: no `$ref` left, those to other files included. */
  document: OpenApiDocument;
  operations: Operation[];
}

/**
 * Loads, validates (against the OpenAPI specification's rules; our own, by the tests) and dereferences
 * a document. Anything wrong becomes one InputError line naming the file, so a user's bad `--spec`
 * never shows a stack trace.
 */
export async function loadSpec(path: string = DEFAULT_SPEC_PATH): Promise<LoadedSpec> {
  let document: OpenApiDocument;
  try {
    // Our own document is validated by the test suite (test/api/spec.test.ts): at each start it is
    // only read and its references followed. A user's --spec is validated in full, by the parser.
    document =
      path === DEFAULT_SPEC_PATH
        ? (dereferenceLocal(JSON.parse(readFileSync(BUILT_IN_SPEC_JSON, 'utf8'))) as OpenApiDocument)
        : await readDocument(path);
  } catch (error) {
    if (error instanceof InputError) throw error;
    const message = (error as Error).message.split('\n').find((line) => line.trim()) ?? 'invalid document';
    throw new InputError(`spec ${path}: ${message.trim()}`);
  }
  try {
    return { source: path, document, operations: buildOperationTable(document) };
  } catch (error) {
    throw new InputError(`spec ${path}: ${(error as Error).message}`);
  }
}

/**
 * A user's document, YAML or JSON, one file or several (relative `$ref`s to other files): checked
 * against the specification's own rules, then bundled and dereferenced, by @redocly/openapi-core
 * (loaded here: a start without `--spec` loads none of it).
 */
async function readDocument(path: string): Promise<OpenApiDocument> {
  const redocly = await import('@redocly/openapi-core');
  // `spec`: the specification's rules (structure, unresolved and misplaced $refs, duplicate
  // operationIds, undeclared path parameters), none of `recommended`'s rules of style: a document
  // that follows the specification loads, whatever its style. No redocly.yaml is read. Keys beside
  // a `$ref` are ones the specification says to ignore, and swagger-parser did: a split document
  // that writes them (the Train Travel API's did) loads.
  const config = await redocly.createConfig({ extends: ['spec'], rules: { 'spec-ref-siblings': 'warn' } });
  // One resolver for both passes: each file is read and parsed once.
  const resolver = new redocly.BaseResolver(config.resolve);
  const root = await resolver.resolveDocument(null, resolve(path), true);
  if (root instanceof Error) throw root;
  checkVersion(root.parsed, path);
  const where = dirname(resolve(path));
  refuseErrors(
    await redocly.lintDocument({ document: root, config, externalRefResolver: resolver }),
    path,
    where,
  );
  const bundled = await redocly.bundle({
    doc: root,
    config,
    externalRefResolver: resolver,
    dereference: true,
  });
  refuseErrors(bundled.problems, path, where);
  return bundled.bundle.parsed as OpenApiDocument;
}

function checkVersion(parsed: unknown, path: string): void {
  const root = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (root.swagger !== undefined) {
    throw new InputError(
      `spec ${path}: an OpenAPI 3 document is required (found a Swagger ${String(root.swagger)} one)`,
    );
  }
  const version = root.openapi;
  if (typeof version !== 'string') {
    throw new InputError(
      `spec ${path}: an OpenAPI 3 document is required (no 'openapi' field naming its version)`,
    );
  }
  if (!OPENAPI_VERSIONS.some((v) => version.startsWith(`${v}.`))) {
    throw new InputError(
      `spec ${path}: OpenAPI ${version} is not supported (${OPENAPI_VERSIONS.join(', ')} are)`,
    );
  }
}

/** The first error as one line: what, where (the file, when another than the document's own), and how many more. */
function refuseErrors(problems: readonly NormalizedProblem[], path: string, base: string): void {
  const errors = problems.filter((p) => p.severity === 'error');
  const first = errors[0];
  if (!first) return;
  const location = first.location[0];
  const file = location?.source.absoluteRef;
  const notes: string[] = [];
  const at = `${file && file !== resolve(path) ? relative(base, file) : ''}${location?.pointer ?? ''}`;
  if (at) notes.push(`at ${at}`);
  if (errors.length > 1) notes.push(`${errors.length - 1} more error${errors.length > 2 ? 's' : ''}`);
  throw new InputError(`spec ${path}: ${first.message}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
}

/**
 * Replaces each `{ $ref: '#/...' }` of a document with the object it points to, in place, as the
 * parser's dereference does (test/api/spec.test.ts compares the two): one object for every use of a
 * component, cycles kept. Our own document refers only within itself.
 */
export function dereferenceLocal(document: object): object {
  const seen = new Set<object>();
  const target = (ref: string): unknown => {
    let node: unknown = document;
    for (const part of ref.slice(2).split('/')) {
      const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
      node = (node as Record<string, unknown> | undefined)?.[key];
    }
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
    return node;
  };
  const resolve = (value: unknown): unknown => {
    let node = value;
    for (let hops = 0; isRef(node); hops++) {
      if (hops > 32) throw new Error(`$ref ${node.$ref} refers in a circle`);
      node = target(node.$ref);
    }
    return node;
  };
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const entries = node as Record<string, unknown>;
    for (const key of Object.keys(entries)) {
      entries[key] = resolve(entries[key]);
      walk(entries[key]);
    }
  };
  walk(document);
  return document;
}

function isRef(node: unknown): node is { $ref: string } {
  return (
    typeof node === 'object' &&
    node !== null &&
    typeof (node as { $ref?: unknown }).$ref === 'string' &&
    (node as { $ref: string }).$ref.startsWith('#/')
  );
}
