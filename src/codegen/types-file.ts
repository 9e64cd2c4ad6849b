import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from '../api/input-error.ts';
import { DEFAULT_SPEC_PATH, type LoadedSpec, loadSpec } from '../api/spec.ts';

/** What `petstore-load types` is asked for, as the user wrote it (for the file's header). */
export interface TypesRequest {
  /** `--spec` as given; undefined for our own document. */
  spec: string | undefined;
  /** `--out` as given; undefined when the text goes to stdout. */
  out: string | undefined;
  /** End the file with `export type Api = TypedApi<operations>` (it imports petstore-load's types). */
  apiType: boolean;
  /** Where relative paths start (default the working directory). */
  cwd?: string;
}

export interface GeneratedTypes {
  text: string;
  /** The document as `run` loads it: the same refusals, and its operations for `init`. */
  spec: LoadedSpec;
}

/**
 * openapi-typescript's options. Defaults a document gives are left optional: a request may leave
 * them out (the server fills them in), and the document's `required` says what a response carries.
 */
const GENERATOR_OPTIONS = { defaultNonNullable: false, silent: true } as const;

/** The command that made the file, as its header repeats it, so that anyone can run it again. */
function commandOf(request: TypesRequest): string {
  return [
    'petstore-load types',
    ...(request.spec === undefined ? [] : [`--spec ${request.spec}`]),
    ...(request.out === undefined ? [] : [`--out ${request.out}`]),
    ...(request.apiType ? [] : ['--no-api-type']),
  ].join(' ');
}

function header(request: TypesRequest, version: string): string {
  const from = request.spec ?? "petstore-load's own pet store document";
  return [
    `// Generated from ${from} (openapi-typescript ${version}) by:`,
    `//   ${commandOf(request)}`,
    '// Do not edit: run that command again when the document changes.',
    '',
    '',
  ].join('\n');
}

const API_IMPORT = "import type { TypedApi } from 'petstore-load';\n\n";
const API_TYPE = [
  '',
  "/** A flow's `api` for this document: `run: async (api: Api) => { await api.call(operationId, input); }`. */",
  'export type Api = TypedApi<operations>;',
  '',
].join('\n');

/**
 * TypeScript declarations of a document (its `paths`, `operations` and `components`), by
 * openapi-typescript, for `TypedApi` (src/api/typed-call.ts). The document is first loaded as `run`
 * loads it, so that a file `run` would refuse is refused here in the same words.
 */
export async function generateTypes(request: TypesRequest): Promise<GeneratedTypes> {
  const cwd = request.cwd ?? process.cwd();
  const path =
    request.spec === undefined
      ? DEFAULT_SPEC_PATH
      : isAbsolute(request.spec)
        ? request.spec
        : resolve(cwd, request.spec);
  const spec = await loadSpec(path);
  const label = request.spec ?? 'petstore.openapi.yaml (built in)';
  // Imported here: it loads the TypeScript compiler, which no other command needs.
  const generator = await import('openapi-typescript');
  let body: string;
  try {
    // By URL, so that references to other files resolve beside the document.
    body = generator.astToString(await generator.default(pathToFileURL(path), GENERATOR_OPTIONS));
  } catch (error) {
    const message = (error as Error).message.split('\n').find((line) => line.trim()) ?? 'cannot generate';
    throw new InputError(`spec ${label}: ${message.trim()}`);
  }
  const { version } = createRequire(import.meta.url)('openapi-typescript/package.json') as {
    version: string;
  };
  const text = [
    header(request, version),
    request.apiType ? API_IMPORT : '',
    `${body.trimEnd()}\n`,
    request.apiType ? API_TYPE : '',
  ].join('');
  return { text, spec };
}
