// Module hooks for a user's scenario files (src/runtime/typescript.ts registers them): how a `.ts`
// scenario loads on any Node, and how its `import 'petstore-load'` finds us from anywhere on disk.
// Node 22.15 and later run them in the thread that imports (module.registerHooks); Node 20 in its
// hooks thread (module.register), which imports this file by itself, on every Node and from src/ as
// from build/: so it is JavaScript (its types in scenario-hooks.d.ts) and imports nothing of ours;
// sucrase is required on the first file it strips.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Our own package.json: a parent from which `petstore-load` resolves to this package (its self-reference). */
const OUR_PACKAGE = new URL('../../package.json', import.meta.url).href;
const TYPESCRIPT = /\.[cm]?ts$/;
/** A URL's search part asking for sucrase where Node strips types itself (a file that needs more). */
export const STRIP_QUERY = 'petstore-load-strip';

/**
 * Whether Node strips a file's types itself (else sucrase does), and the public module the CLI runs
 * when it is not build/'s (src/index.ts, in a clone after an edit): a scenario's `petstore-load` is
 * then that one, so that it shares the CLI's modules. Set by the hooks' registrar.
 */
const state = { native: false, entry: undefined };
export function useNativeStripping(native, entry) {
  state.native = native;
  state.entry = entry;
}

/** Relative names a TypeScript author writes that Node does not map to a file: `./x.js`, `./x`, `./dir`. */
export function candidates(specifier) {
  if (/\.m?js$/.test(specifier)) return [specifier.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts')];
  if (/\.[cm]?[jt]sx?$|\.json$/.test(specifier)) return [];
  return [`${specifier}.ts`, `${specifier}/index.ts`];
}

function isOurName(specifier) {
  return specifier === 'petstore-load' || specifier.startsWith('petstore-load/');
}

function notFound(error) {
  const code = error?.code;
  return (
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'ERR_UNSUPPORTED_DIR_IMPORT' ||
    code === 'ERR_PACKAGE_PATH_NOT_EXPORTED'
  );
}

/** Where a scenario's import failed, the names a TypeScript author means, tried in order. */
function retries(specifier, context) {
  if (isOurName(specifier)) return [[specifier, { ...context, parentURL: OUR_PACKAGE }]];
  const parent = context.parentURL ?? '';
  if (!/^\.\.?\//.test(specifier) || !TYPESCRIPT.test(parent.replace(/[?#].*$/, ''))) return [];
  return candidates(specifier)
    .filter((name) => existsSync(fileURLToPath(new URL(name, parent))))
    .map((name) => [name, context]);
}

/** TypeScript to JavaScript by erasing types (and, as tsc would, compiling an enum or a namespace). */
let transform;
export function stripTypes(code, path) {
  // sucrase is CommonJS: required on the first file it strips, in whichever thread the hooks run.
  transform ??= createRequire(import.meta.url)('sucrase').transform;
  return transform(code, {
    transforms: ['typescript'],
    // As Node's own stripping: every import is kept, whatever it imports; modern syntax is left alone.
    keepUnusedImports: true,
    disableESTransforms: true,
    filePath: path,
  }).code;
}

/** Whether we strip this URL ourselves: Node cannot (20, or under node_modules), or was told it could not. */
function oursToStrip(url) {
  if (!url.startsWith('file:')) return false;
  const [path = '', search = ''] = url.split(/[?#]/);
  if (!TYPESCRIPT.test(path)) return false;
  return !state.native || path.includes('/node_modules/') || search.includes(STRIP_QUERY);
}

function stripped(url) {
  const path = fileURLToPath(url.replace(/[?#].*$/, ''));
  // A scenario is a module: it imports petstore-load and exports its scenario.
  const format = path.endsWith('.cts') ? 'commonjs' : 'module';
  return { format, source: stripTypes(readFileSync(path, 'utf8'), path), shortCircuit: true };
}

/**
 * A file a sucrase-stripped file imports is stripped by sucrase too: the query its parent was loaded
 * with does not pass to a relative URL by itself.
 */
function carried(context, resolved) {
  const parent = context.parentURL ?? '';
  if (!parent.includes(STRIP_QUERY) || !resolved.url.startsWith('file:') || resolved.url.includes('?'))
    return resolved;
  return TYPESCRIPT.test(resolved.url) ? { ...resolved, url: `${resolved.url}?${STRIP_QUERY}` } : resolved;
}

/** `petstore-load` where the CLI runs its public module from src/ (a clone after an edit): that one. */
function ownEntry(specifier) {
  return specifier === 'petstore-load' && state.entry ? { url: state.entry, shortCircuit: true } : undefined;
}

/** module.registerHooks (Node 22.15 and later): synchronous, in the importing thread. */
export const syncHooks = {
  resolve(specifier, context, next) {
    const entry = ownEntry(specifier);
    if (entry) return entry;
    try {
      return carried(context, next(specifier, context));
    } catch (error) {
      if (!notFound(error)) throw error;
      for (const [name, ctx] of retries(specifier, context)) return carried(context, next(name, ctx));
      throw error;
    }
  },
  load(url, context, next) {
    return oursToStrip(url) ? stripped(url) : next(url, context);
  },
};

/** module.register (Node 20 to 22.14): the same hooks, asynchronous, in Node's hooks thread. */
export async function initialize(data) {
  useNativeStripping(Boolean(data?.native), data?.entry);
}

export async function resolve(specifier, context, next) {
  const entry = ownEntry(specifier);
  if (entry) return entry;
  try {
    return carried(context, await next(specifier, context));
  } catch (error) {
    if (!notFound(error)) throw error;
    for (const [name, ctx] of retries(specifier, context)) return carried(context, await next(name, ctx));
    throw error;
  }
}

export async function load(url, context, next) {
  return oursToStrip(url) ? stripped(url) : next(url, context);
}
