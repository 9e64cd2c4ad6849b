import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildIsFresh } from '../../bin/source-stamp.js';
import { builtScenario } from '../../src/scenario/built-scenario.ts';
import { SCENARIOS_DIR } from '../../src/scenario/load.ts';
import { REPO } from '../helpers/integration-cli.ts';
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

  it('holds each shipped scenario stripped, its imports relinked to build/: the same scenario', async () => {
    const built = join(REPO, 'build', 'scenarios');
    const names = readdirSync(SCENARIOS_DIR).filter((f) => f.endsWith('.ts'));
    expect(names.length).toBeGreaterThan(3);
    for (const name of names) {
      const copy = builtScenario(join(SCENARIOS_DIR, name), SCENARIOS_DIR, built);
      expect(copy, name).toBe(pathToFileURL(join(built, name.replace(/\.ts$/, '.js'))).href);
      const [source, stripped] = await Promise.all([
        import(pathToFileURL(join(SCENARIOS_DIR, name)).href),
        import(copy as string),
      ]);
      const shape = (s: { default: Record<string, unknown> & { flows: { name: string }[] } }) => ({
        ...s.default,
        flows: s.default.flows.map((f) => f.name),
        setup: typeof s.default.setup,
        teardown: typeof s.default.teardown,
        probes: Array.isArray(s.default.probes) ? s.default.probes.length : typeof s.default.probes,
      });
      expect(shape(stripped), name).toEqual(shape(source));
    }
  });

  it('runs a shipped scenario from build/ too: no TypeScript source and no compiler, on any Node', async () => {
    const out = await loadedBy(['run', 'catalogue-browse', '--print-config']);
    expect(out.code, out.stderr).toBe(0);
    expect([...out.from]).toEqual(['build']);
    expect(out.ours).toContain('scenarios/catalogue-browse');
    expect(['tsx', 'esbuild'].filter((p) => out.packages.has(p))).toEqual([]);
  });
});
