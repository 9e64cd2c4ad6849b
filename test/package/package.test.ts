import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/integration-cli.ts';
import { packTarball, QUIET_INSTALL, type Ran, run, userProject } from '../helpers/package.ts';

/**
 * The package as a user gets it: packed as `npm pack` packs it, installed into a project of the
 * user's own outside the checkout, their scenario type-checked by their TypeScript and run by the
 * installed CLI; then publint and attw on what was packed. The examples that README and docs/ show
 * are type-checked there too: they are the code users copy.
 */
const OURS = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const installedVersion = (name: string) =>
  (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

let root: string;
let tarball: string;
let project: string;
let installed: Ran;

const SCENARIO = `import { type ApiResponse, defineScenario, type Pet, parseRetryAfter } from 'petstore-load';

const seen = new Set<number>();

export default defineScenario({
  name: 'browse',
  workload: { executor: 'constant-vus', vus: 2, duration: '2s' },
  thresholds: ['rate_limited<50%'],
  flows: [
    {
      name: 'list',
      run: async (api) => {
        const res: ApiResponse<Pet[]> = await api.listPets({ limit: 5 });
        for (const pet of res.ok ? res.body : []) seen.add(pet.id);
        if (res.status === 429) parseRetryAfter(res.headers['retry-after']);
      },
    },
  ],
});
`;

/** A user's tsconfig: strict, exactOptionalPropertyTypes, with the resolution and lib check given. */
function tsconfig(
  name: string,
  resolution: 'nodenext' | 'bundler',
  skipLibCheck: boolean,
  include: string[],
) {
  const options = {
    target: 'ES2022',
    module: resolution === 'bundler' ? 'preserve' : 'nodenext',
    moduleResolution: resolution,
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    allowImportingTsExtensions: true,
    skipLibCheck,
    noEmit: true,
    types: ['node'],
  };
  writeFileSync(join(project, name), JSON.stringify({ compilerOptions: options, include }, null, 2));
}

const tsc = (config: string) => run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', config], project);
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(join(project, 'node_modules', '.bin', 'petstore-load'), args, project, env, 60_000);

/** Every ```ts block of README and docs/ that imports the package: a file each, under examples/. */
function docExamples(): string[] {
  const pages = ['README.md', ...readdirSync(join(REPO, 'docs')).map((f) => join('docs', f))];
  const written: string[] = [];
  for (const page of pages.filter((p) => p.endsWith('.md'))) {
    const text = readFileSync(join(REPO, page), 'utf8');
    for (const [index, [, code]] of [...text.matchAll(/```ts\n([\s\S]*?)```/g)].entries()) {
      if (!code?.includes("from 'petstore-load'")) continue;
      const file = join('examples', `${page.replace(/[/.]/g, '_')}-${index}.ts`);
      mkdirSync(join(project, 'examples'), { recursive: true });
      writeFileSync(join(project, file), code);
      written.push(file);
    }
  }
  return written;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'petstore-load-package-'));
  tarball = await packTarball(join(root, 'packed'));
  project = userProject(join(root, 'user'));
  writeFileSync(join(project, 'load', 'browse.ts'), SCENARIO);
  installed = await run(
    'npm',
    [
      'install',
      '-D',
      ...QUIET_INSTALL,
      tarball,
      `typescript@${installedVersion('typescript')}`,
      `@types/node@${installedVersion('@types/node')}`,
    ],
    project,
  );
}, 240_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe(`the package as a user installs it (Node ${process.versions.node})`, () => {
  it('installs into a fresh project without a single warning', () => {
    expect(installed.code, installed.stderr).toBe(0);
    const warnings = `${installed.stdout}\n${installed.stderr}`
      .split('\n')
      .filter((l) => /\bwarn\b/i.test(l));
    expect(warnings).toEqual([]);
  });

  it('ships what runs and nothing else: no tests, benches, CI files or configs, no sources, no install script', async () => {
    const listing = await run('tar', ['tzf', tarball], root);
    const files = listing.stdout
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    const unwanted = files.filter((f) =>
      /^(test|bench|\.ci|src|deploy|scripts|reports)\/|^(vitest|biome|tsconfig)[^/]*$|\.test\.ts$/.test(f),
    );
    expect(unwanted).toEqual([]);
    for (const needed of [
      'LICENSE',
      'README.md',
      'bin/petstore-load.js',
      'build/index.js',
      'build/index.d.ts',
    ])
      expect(files, needed).toContain(needed);
    expect(files.some((f) => f.startsWith('build/api/petstore.openapi'))).toBe(true);
    expect(files.some((f) => f.startsWith('scenarios/') && f.endsWith('.ts'))).toBe(true);
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules', 'petstore-load', 'package.json'), 'utf8'),
    ) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare', 'prepack'])
      expect(manifest.scripts[script], script).toBeUndefined();
    // Nothing in the installed tree has an install script either (esbuild's came with tsx).
    const withScripts = installedPackages(join(project, 'node_modules')).filter((dir) => {
      const scripts = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts ?? {}) as object;
      return ['preinstall', 'install', 'postinstall'].some((s) => s in scripts);
    });
    expect(withScripts.map((d) => relative(project, d))).toEqual([]);
    expect(statSync(tarball).size).toBeLessThan(2 * 1024 * 1024);
  });

  it("type-checks the user's scenario and every example of README and docs/ with the user's strict tsc", async () => {
    const examples = docExamples();
    expect(examples.length).toBeGreaterThan(0);
    // The typed examples import the pet store's types as the installed `types` writes them.
    const types = await cli(['types', '--out', 'examples/api-types.ts']);
    expect(types.code, types.stderr).toBe(0);
    const include = ['load', 'examples'];
    tsconfig('tsconfig.json', 'nodenext', false, include);
    tsconfig('tsconfig.skiplib.json', 'nodenext', true, include);
    tsconfig('tsconfig.bundler.json', 'bundler', false, include);
    for (const config of ['tsconfig.json', 'tsconfig.skiplib.json', 'tsconfig.bundler.json']) {
      const checked = await tsc(config);
      expect(checked.code, `${config}: ${checked.stdout}`).toBe(0);
    }
  });

  it("finds a misspelt operation and a wrong body field in the user's file, not in ours", async () => {
    mkdirSync(join(project, 'wrong'), { recursive: true });
    writeFileSync(
      join(project, 'wrong', 'typo.ts'),
      `import { defineScenario } from 'petstore-load';
export default defineScenario({
  name: 'typo',
  workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
  flows: [{ name: 'x', run: async (api) => {
    await api.creatPet({ name: 'Rex', categoryId: 1 });
    await api.createPet({ name: 'Rex', categoryId: 1, colour: 'brown' });
  } }],
});
`,
    );
    tsconfig('tsconfig.wrong.json', 'nodenext', false, ['wrong']);
    const checked = await tsc('tsconfig.wrong.json');
    expect(checked.code).not.toBe(0);
    const errors = checked.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^wrong\/typo\.ts\(6,\d+\): error TS2551: Property 'creatPet' does not exist/);
    // NewPet is the document's schema (src/api/models.ts): the error lists the fields it has.
    expect(errors[1]).toMatch(
      /^wrong\/typo\.ts\(7,\d+\): error TS2353: .*'colour' does not exist in type '\{ name: string; categoryId: number;/,
    );
  });

  it('runs the scenario with the installed CLI, from build/ alone, no type stripper on its own code', async () => {
    const loads = join(root, 'loads.txt');
    const recorder = join(REPO, 'test', 'helpers', 'record-loads.mjs');
    const out = await cli(['run', './load/browse.ts', '--duration', '2s', '--out', 'out'], {
      NODE_OPTIONS: `--import=${recorder}`,
      PETSTORE_LOADS: loads,
    });
    expect(out.code, out.stderr).toBe(0);
    expect(existsSync(join(project, 'out', 'result.json'))).toBe(true);
    expect(existsSync(join(project, 'out', 'report.html'))).toBe(true);
    const result = JSON.parse(readFileSync(join(project, 'out', 'result.json'), 'utf8'));
    expect(result.meta.toolVersion ?? result.meta.version).toBe(OURS.version);
    expect(result.overall.requests).toBeGreaterThan(0);
    // What the run loaded of the package: its build/ (and the user's scenario), never a compiler.
    const urls = readFileSync(loads, 'utf8').split('\n').filter(Boolean);
    const ours = urls.filter((u) => u.includes('/node_modules/petstore-load/'));
    expect(ours.length).toBeGreaterThan(50);
    expect(ours.filter((u) => !/\/node_modules\/petstore-load\/(build|bin)\//.test(u))).toEqual([]);
    const packages = new Set(urls.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]));
    expect(['tsx', 'esbuild', 'typescript', 'fastify'].filter((p) => packages.has(p))).toEqual([]);
    expect(existsSync(join(project, 'node_modules', 'petstore-load', 'src'))).toBe(false);
  });

  it('loads a scenario anywhere: in a workspace package, through a symlink, by an absolute path', async () => {
    // A monorepo's package: node_modules is hoisted to the project's root, two folders up.
    const workspace = join(project, 'packages', 'api-load');
    mkdirSync(join(workspace, 'load'), { recursive: true });
    writeFileSync(
      join(workspace, 'package.json'),
      '{ "name": "api-load", "private": true, "type": "module" }\n',
    );
    writeFileSync(join(workspace, 'load', 'browse.ts'), SCENARIO);
    const nested = await run(
      join(project, 'node_modules', '.bin', 'petstore-load'),
      ['run', './load/browse.ts', '--duration', '1s', '--out', 'out'],
      workspace,
    );
    expect(nested.code, nested.stderr).toBe(0);
    // A file kept outside any project, linked in: Node resolves its imports from where it really lies.
    const shared = join(root, 'shared-scenarios');
    mkdirSync(shared, { recursive: true });
    writeFileSync(join(shared, 'browse.ts'), SCENARIO);
    symlinkSync(join(shared, 'browse.ts'), join(project, 'load', 'linked.ts'));
    const linked = await cli([
      'run',
      join(project, 'load', 'linked.ts'),
      '--duration',
      '1s',
      '--out',
      'out-linked',
    ]);
    expect(linked.code, linked.stderr).toBe(0);
    expect(existsSync(join(project, 'out-linked', 'result.json'))).toBe(true);
  });

  it("prints the package's version, not the user's project's", async () => {
    const out = await cli(['--version']);
    expect(out.stdout.trim()).toBe(OURS.version);
  });

  it('runs without an install too: npx --package=<tarball> in a folder with no node_modules', async () => {
    const bare = join(root, 'bare');
    mkdirSync(bare, { recursive: true });
    writeFileSync(join(bare, 'browse.ts'), SCENARIO);
    const out = await run(
      'npx',
      [
        '--yes',
        ...QUIET_INSTALL,
        `--package=${tarball}`,
        'petstore-load',
        'run',
        './browse.ts',
        '--duration',
        '1s',
        '--out',
        'out',
      ],
      bare,
      {},
      120_000,
    );
    expect(out.code, out.stderr).toBe(0);
    expect(existsSync(join(bare, 'out', 'result.json'))).toBe(true);
  }, 150_000);

  it('passes publint (strict) and attw under node16 ESM and bundler resolution', async () => {
    const dir = join(project, 'node_modules', 'petstore-load');
    const { publint } = await import('publint');
    const linted = await publint({ pkgDir: dir, strict: true, pack: false });
    expect(linted.messages).toEqual([]);
    const core = await import('@arethetypeswrong/core');
    const files: Record<string, Uint8Array> = {};
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      const path = join(dir, file);
      if (statSync(path).isFile())
        files[`/node_modules/petstore-load/${file}`] = new Uint8Array(readFileSync(path));
    }
    const checked = await core.checkPackage(new core.Package(files, 'petstore-load', OURS.version));
    expect(checked.types).toEqual({ kind: 'included' });
    const problems = 'problems' in checked ? checked.problems : [];
    // An ES module package: CommonJS callers under node16 (and node10) are not ours to serve.
    const relevant = problems.filter(
      (p) => !('resolutionKind' in p) || p.resolutionKind === 'node16-esm' || p.resolutionKind === 'bundler',
    );
    expect(relevant).toEqual([]);
  });
});

/** Every package folder under a node_modules, scoped ones and nested ones included. */
function installedPackages(modules: string): string[] {
  if (!existsSync(modules)) return [];
  return readdirSync(modules).flatMap((name) => {
    if (name.startsWith('.')) return [];
    const dir = join(modules, name);
    if (name.startsWith('@')) return readdirSync(dir).flatMap((inner) => withNested(join(dir, inner)));
    return withNested(dir);
  });
}

function withNested(dir: string): string[] {
  if (!existsSync(join(dir, 'package.json'))) return [];
  return [dir, ...installedPackages(join(dir, 'node_modules'))];
}
