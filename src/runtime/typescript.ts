import module from 'node:module';

/** Node strips types itself, wherever the file lies outside node_modules. */
export const NODE_STRIPS = Boolean((process.features as { typescript?: string | false }).typescript);

/**
 * Whether this Node strips TypeScript types itself (22.18 and later, 24, 26). Node will not strip
 * types under node_modules, so our own sources there (an installed copy) never run: an installed
 * package runs build/ alone. In a clone, bin/petstore-load.js runs src/ after an edit, through tsx
 * (a devDependency) on Node 20; worker threads follow the same choice (src/threads/runner.ts).
 */
export const NATIVE_TYPESCRIPT = NODE_STRIPS && !import.meta.url.includes('/node_modules/');

/** tsx's ESM API, for our own sources in a clone where Node does not strip types (a devDependency). */
export const tsxApi = (): string => import.meta.resolve('tsx/esm/api');

type RegisterHooks = (hooks: object) => unknown;

/** The public module a scenario's `petstore-load` names: ours as we run (src/'s in a clone after an edit). */
const ENTRY = import.meta.url.endsWith('.ts') ? new URL('../index.ts', import.meta.url).href : undefined;
let registered: Promise<void> | undefined;

/**
 * The hooks a user's scenario loads through (src/runtime/scenario-hooks.js), once per thread: its
 * types stripped by Node where Node can, else by sucrase (no install script, no compiler: a
 * dependency users install quietly); `./x.js` naming `./x.ts`, a folder naming its index.ts; and
 * `import 'petstore-load'` answered by this package from a scenario anywhere on disk (outside any
 * project that installed it, through a symlink, under `npx`).
 */
export function registerScenarioHooks(): Promise<void> {
  registered ??= (async () => {
    const hooksUrl = new URL('./scenario-hooks.js', import.meta.url);
    const registerHooks = (module as { registerHooks?: RegisterHooks }).registerHooks;
    if (registerHooks) {
      const hooks = (await import(hooksUrl.href)) as typeof import('./scenario-hooks.js');
      hooks.useNativeStripping(NODE_STRIPS, ENTRY);
      registerHooks(hooks.syncHooks);
      return;
    }
    module.register(hooksUrl.href, { data: { native: NODE_STRIPS, entry: ENTRY } });
  })();
  return registered;
}

/**
 * Where Node strips types, a file that needs more (an enum) is stripped by sucrase instead, and so is
 * every file it imports: its URL asks for it.
 */
export async function strippedBySucrase(url: string): Promise<string> {
  const hooks = (await import(
    new URL('./scenario-hooks.js', import.meta.url).href
  )) as typeof import('./scenario-hooks.js');
  return `${url}${url.includes('?') ? '&' : '?'}${hooks.STRIP_QUERY}`;
}
