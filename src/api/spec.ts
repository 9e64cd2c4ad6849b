import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { InputError } from './input-error.ts';
import { buildOperationTable, type Operation } from './operations.ts';

/** Our own document: the reference server serves it and the load side reads it unless given `--spec`. */
export const DEFAULT_SPEC_PATH = fileURLToPath(new URL('./petstore.openapi.yaml', import.meta.url));

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
    // only read and dereferenced. Validating it against the OpenAPI schema cost every command ~0.2 s
    // of CPU before anything ran. A user's --spec is validated in full.
    const read = path === DEFAULT_SPEC_PATH ? SwaggerParser.dereference(path) : SwaggerParser.validate(path);
    document = (await read) as OpenAPIV3.Document;
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
