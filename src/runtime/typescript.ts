/**
 * Whether this Node runs our TypeScript itself, by stripping types (22.18 and later, 24, 26), or
 * through tsx (Node 20). Node will not strip types under node_modules, so a copy installed as a
 * dependency goes through tsx too. bin/petstore-load.js makes the same choice before any TypeScript
 * has loaded; worker threads and scenario files follow this one.
 */
export const NATIVE_TYPESCRIPT =
  Boolean((process.features as { typescript?: string | false }).typescript) &&
  !import.meta.url.includes('/node_modules/');

/** tsx's ESM API, where it is installed (ours), to register or to import one module through. */
export const tsxApi = (): string => import.meta.resolve('tsx/esm/api');
