import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { threadBoot } from '../../src/threads/runner.ts';
import { cliWorkspace, readJson } from '../helpers/integration-cli.ts';
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

/**
 * A scenario of one flow, with `extra` TypeScript before it, importing `petstore-load` by name from a
 * folder outside any project that installed it: the CLI answers the name itself.
 */
function scenario(name: string, extra: string): string {
  const path = join(workspace.fresh(name), `${name}.ts`);
  writeFileSync(
    path,
    `import { defineScenario } from 'petstore-load';
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
    expect(out.stderr).not.toContain('loaded through');
    // What a thread runs first: the module itself where Node strips types, else tsx, then the module.
    const boot = threadBoot(new URL('file:///x/worker.ts'));
    expect(boot.includes('tsx'), boot).toBe(!NATIVE);
    expect(boot).toContain('import("file:///x/worker.ts")');
  }, 60_000);

  it("loads a user's scenario with no tsx: Node strips where it can, sucrase where it cannot or the file needs more", async () => {
    const out = await loadedBy(['run', scenario('with-enum', 'enum Mode { Fast = 1 }\nvoid Mode.Fast;')]);
    expect(out.code, out.stderr).toBe(0);
    expect(['tsx', 'esbuild'].filter((p) => out.packages.has(p))).toEqual([]);
    if (NATIVE) {
      expect(out.stderr).toMatch(
        /scenario \S+with-enum\.ts needs more than type stripping \(.*enum.*\): loaded through sucrase/,
      );
      expect(out.packages).toContain('sucrase');
    } else expect(out.stderr).not.toContain('loaded through');
    // --print-config says it too, in its JSON.
    const printed = await loadedBy([
      'run',
      scenario('with-enum-printed', 'enum Mode { Fast = 1 }\nvoid Mode.Fast;'),
      '--print-config',
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const warnings = (JSON.parse(printed.stdout) as { warnings?: string[] }).warnings ?? [];
    expect(warnings.some((w) => w.includes('loaded through sucrase'))).toBe(NATIVE);
  }, 60_000);

  it('strips what a scenario imports as it strips the scenario: an enum in a helper, TypeScript under node_modules', async () => {
    const path = scenario(
      'with-helpers',
      "import { Mode } from './modes.ts';\nimport { pace } from 'shared-flows';\nvoid Mode.Fast; void pace;",
    );
    const dir = dirname(path);
    writeFileSync(join(dir, 'modes.ts'), 'export enum Mode { Fast = 1 }\n');
    // A workspace's package of TypeScript flows, linked or installed: Node never strips types there.
    mkdirSync(join(dir, 'node_modules', 'shared-flows'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'shared-flows', 'package.json'),
      '{ "name": "shared-flows", "type": "module", "exports": "./index.ts" }\n',
    );
    writeFileSync(join(dir, 'node_modules', 'shared-flows', 'index.ts'), 'export const pace: number = 1;\n');
    const out = await loadedBy(['run', path]);
    expect(out.code, out.stderr).toBe(0);
    if (NATIVE)
      expect(out.stderr).toMatch(
        /with-helpers\.ts needs more than type stripping .*: loaded through sucrase/,
      );
  }, 60_000);

  it('resolves the names a TypeScript author writes: ./x.js for x.ts, a folder for its index.ts', async () => {
    const path = scenario(
      'with-names',
      "import { limit } from './lib';\nimport { pause } from './pause.js';\nvoid limit; void pause;",
    );
    mkdirSync(join(dirname(path), 'lib'));
    writeFileSync(join(dirname(path), 'lib', 'index.ts'), 'export const limit: number = 1;\n');
    writeFileSync(join(dirname(path), 'pause.ts'), 'export const pause: string = "1s";\n');
    const out = await loadedBy(['run', path]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).not.toContain('loaded through');
    // A name that is nowhere is the scenario's own failure, in one line.
    const missing = await loadedBy([
      'run',
      scenario('with-missing', "import { x } from './nowhere.js';\nvoid x;"),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/scenario \S+with-missing\.ts: does not load: .*nowhere/);
  }, 60_000);
});
