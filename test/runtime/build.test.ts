import { describe, expect, it } from 'vitest';
import { buildIsFresh } from '../../bin/source-stamp.js';
import { loadedBy } from '../helpers/loaded-modules.ts';

/**
 * `npm ci` (npm's prepare) and `npm test` build src/ into build/, plain JavaScript: the CLI starts on
 * it on any Node, with no tsx and no type stripping, while src/ has not changed since.
 */
describe('build/', () => {
  it('is made from src/ as it is now (npm test builds it first; else npm run build)', () => {
    expect(buildIsFresh(), 'build/ is older than src/: npm run build').toBe(true);
  });

  it('is what the CLI starts on: --help loads no TypeScript source and no compiler', async () => {
    const out = await loadedBy(['--help']);
    expect(out.code, out.stderr).toBe(0);
    expect([...out.from]).toEqual(['build']);
    expect(out.ours).toContain('cli/main');
    expect(['tsx', 'esbuild'].filter((p) => out.packages.has(p))).toEqual([]);
  });
});
