import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { InputError } from './input-error.ts';
import { buildOperationTable, type Operation } from './operations.ts';

/** Our own document: the reference server serves it and the load side reads it unless given `--spec`. */
export const DEFAULT_SPEC_PATH = fileURLToPath(new URL('./petstore.openapi.yaml', import.meta.url));
/** The same document as JSON (`npm run spec:json`), read at each start: no YAML parser, no swagger-parser. */
export const BUILT_IN_SPEC_JSON = fileURLToPath(new URL('./petstore.openapi.json', import.meta.url));

export interface LoadedSpec {
  /** Where it came from, for messages. */
  source: string;
  /** Validated and dereferenced: no `$ref` left. */
  document: OpenAPIV3.Document;
  operations: Operation[];
}

/**
 * Loads, validates (against the OpenAPI schema and its rules; our own, by the tests) and dereferences a document.
 * Anything wrong becomes one InputError line naming the file, so a user's bad `--spec` never
 * shows a stack trace.
 */
export async function loadSpec(path: string = DEFAULT_SPEC_PATH): Promise<LoadedSpec> {
  let document: OpenAPIV3.Document;
  try {
    // Our own document is validated by the test suite (test/api/spec.test.ts): at each start it is
    // only read and its references followed. A user's --spec is validated in full, by swagger-parser.
    document =
      path === DEFAULT_SPEC_PATH
        ? (dereferenceLocal(JSON.parse(readFileSync(BUILT_IN_SPEC_JSON, 'utf8'))) as OpenAPIV3.Document)
        : ((await (
            await import('@apidevtools/swagger-parser')
          ).default.validate(path)) as OpenAPIV3.Document);
  } catch (error) {
    const message = (error as Error).message.split('\n').find((line) => line.trim()) ?? 'invalid document';
    throw new InputError(`spec ${path}: ${message.trim()}`);
  }
  if (typeof document.openapi !== 'string' || !document.openapi.startsWith('3.')) {
    throw new InputError(`spec ${path}: an OpenAPI 3 document is required (found a Swagger 2.0 one)`);
  }
  try {
    return { source: path, document, operations: buildOperationTable(document) };
  } catch (error) {
    throw new InputError(`spec ${path}: ${(error as Error).message}`);
  }
}

/**
 * Replaces each `{ $ref: '#/...' }` of a document with the object it points to, in place, as
 * swagger-parser's dereference does: one object for every use of a component, cycles kept. Our own
 * document refers only within itself.
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
