// Module hooks for a user's scenario files (src/runtime/typescript.ts registers them): how a `.ts`
// scenario loads on any Node, and how its `import 'petstore-load'` finds us from anywhere on disk.
// Node 22.15 and later run them in the thread that imports (module.registerHooks); Node 20 in its
// hooks thread (module.register), which imports this file by itself, on every Node and from src/ as
// from build/: so it is JavaScript (its types in scenario-hooks.d.ts) and imports nothing of ours;
// sucrase is loaded on the first file it strips.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Our own package.json: a parent from which `petstore-load` resolves to this package (its self-reference). */
const OUR_PACKAGE = new URL('../../package.json', import.meta.url).href;
const TYPESCRIPT = /\.[cm]?ts$/;
/** A URL's search part asking for sucrase where Node strips types itself (a file that needs more). */
export const STRIP_QUERY = 'petstore-load-strip';

/** Our public module as packed (package.json's exports). */
const BUILT_ENTRY = new URL('../../build/index.js', import.meta.url).href;

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

/** What `petstore-load` resolved to, made the CLI's own public module where that is not build/'s. */
function own(specifier, resolved) {
  if (specifier !== 'petstore-load' || !state.entry || resolved.url !== BUILT_ENTRY) return resolved;
  return { url: state.entry, shortCircuit: true };
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
async function loadSucrase() {
  // A CommonJS module: its names come as the namespace's own, or under default where a loader (tsx,
  // in a clone) hands it over whole.
  const sucrase = await import('sucrase');
  transform ??= sucrase.transform ?? sucrase.default?.transform;
}

export function stripTypes(code, path) {
  if (!transform) throw new Error('sucrase is not loaded');
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

/** module.registerHooks (Node 22.15 and later): synchronous, in the importing thread. */
export const syncHooks = {
  resolve(specifier, context, next) {
    try {
      return own(specifier, next(specifier, context));
    } catch (error) {
      if (!notFound(error)) throw error;
      for (const [name, ctx] of retries(specifier, context)) return own(specifier, next(name, ctx));
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
  try {
    return own(specifier, await next(specifier, context));
  } catch (error) {
    if (!notFound(error)) throw error;
    for (const [name, ctx] of retries(specifier, context)) return own(specifier, await next(name, ctx));
    throw error;
  }
}

export async function load(url, context, next) {
  if (!oursToStrip(url)) return next(url, context);
  await loadSucrase();
  return stripped(url);
}

/** For the synchronous hooks: sucrase loaded before the first import that may need it. */
export const prepareStripping = loadSucrase;
