import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { threadBoot } from '../../src/threads/runner.ts';
import { cliWorkspace, REPO, readJson } from '../helpers/integration-cli.ts';
import { loadedBy, NATIVE } from '../helpers/loaded-modules.ts';

/**
 * The sources as they run after an edit (PETSTORE_LOAD_SOURCES=1 here: otherwise the CLI starts on
 * build/, test/runtime/build.test.ts). Where Node strips types itself (22.18 and later: CI runs this
 * file on Node 26 too), the CLI, its worker threads and its embedded server run them with no
 * compiler loaded; on Node 20 they go through tsx. Which one happened is read from the modules each
 * process loaded.
 */
const workspace = cliWorkspace('typescript');
const SOURCES = { PETSTORE_LOAD_SOURCES: '1' };

/** A scenario of one flow, with `extra` TypeScript before it, importing our sources by path. */
function scenario(name: string, extra: string): string {
  const path = join(workspace.fresh(name), `${name}.ts`);
  writeFileSync(
    path,
    `import { defineScenario } from '${join(REPO, 'src', 'scenario', 'define.ts')}';
${extra}
export default defineScenario({
  name: '${name}',
  workload: { executor: 'constant-arrival-rate', rate: 5, duration: '1s' },
  flows: [{ name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) }],
});
`,
  );
  return path;
}

describe(`TypeScript on Node ${process.versions.node} (${NATIVE ? 'types stripped by Node' : 'through tsx'})`, () => {
  it('runs the CLI, its worker threads and its embedded server with tsx only where Node cannot strip types', async () => {
    const dir = workspace.fresh('workers');
    const plain = scenario('plain', 'const limit: number = 1;');
    const out = await loadedBy(['run', plain, '--workers', '2', '--out', dir], 60_000, SOURCES);
    // Both threads ran the scenario (a thread whose boot could not load our sources fails the run).
    expect(out.code, out.stderr).toBe(0);
    expect(readJson(join(dir, 'result.json'))).toMatchObject({ meta: { workers: 2 } });
    expect([...out.from]).toEqual(['src']);
    // The main thread and the embedded server's process (recorded; a thread's loads are not).
    expect(out.packages).toContain('fastify');
    expect(out.packages.has('tsx'), [...out.packages].join(' ')).toBe(!NATIVE);
    expect(out.stderr).not.toContain('loaded through tsx');
    // What a thread runs first: the module itself where Node strips types, else tsx, then the module.
    const boot = threadBoot(new URL('file:///x/worker.ts'));
    expect(boot.includes('tsx'), boot).toBe(!NATIVE);
    expect(boot).toContain('import("file:///x/worker.ts")');
  }, 60_000);

  it('loads a scenario that needs more than stripping (an enum) through tsx, and says so where Node strips', async () => {
    const out = await loadedBy(['run', scenario('with-enum', 'enum Mode { Fast = 1 }\nvoid Mode.Fast;')]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.packages).toContain('tsx');
    if (NATIVE)
      expect(out.stderr).toMatch(
        /scenario \S+with-enum\.ts needs more than type stripping \(.*enum.*\): loaded through tsx/,
      );
    else expect(out.stderr).not.toContain('loaded through tsx');
    // --print-config says it too, in its JSON.
    const printed = await loadedBy([
      'run',
      scenario('with-enum-printed', 'enum Mode { Fast = 1 }\nvoid Mode.Fast;'),
      '--print-config',
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const warnings = (JSON.parse(printed.stdout) as { warnings?: string[] }).warnings ?? [];
    expect(warnings.some((w) => w.includes('loaded through tsx'))).toBe(NATIVE);
    // A folder imported by its name (its index.ts), as tsx resolves it and Node does not.
    const withFolder = scenario('with-folder', "import { limit } from './lib';\nvoid limit;");
    mkdirSync(join(dirname(withFolder), 'lib'));
    writeFileSync(join(dirname(withFolder), 'lib', 'index.ts'), 'export const limit: number = 1;\n');
    const folder = await loadedBy(['run', withFolder]);
    expect(folder.code, folder.stderr).toBe(0);
    if (NATIVE) expect(folder.stderr).toMatch(/imports a folder, which Node does not resolve by itself/);
  }, 60_000);
});
