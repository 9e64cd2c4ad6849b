// `npm run build` (and npm's `prepare`, after `npm ci`): src/ with its types stripped, to build/, so
// that the CLI, its worker threads and its embedded server start on plain JavaScript on any Node: no
// tsx and no type stripping at each start (on Node 26 stripping alone cost a start 130 ms and 16 MB,
// tsx on Node 20 more). bin/petstore-load.js runs build/ while it is as new as src/ (the stamp), and
// src/ otherwise. build/ sits beside src/, so a path relative to a source file
// (`../../package.json`) means the same from either.
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';
import { BUILD, contentDigest, sourceStamp, SRC as src } from '../bin/source-stamp.js';
import { publicDeclarations } from './declarations.mjs';
import { relink } from './relink.mjs';

const out = BUILD.replace(/\/$/, '');
const next = `${out}.next-${process.pid}`;

const stamp = sourceStamp();
const files = readdirSync(src, { recursive: true }).filter((f) => statSync(join(src, f)).isFile());
const result = await build({
  entryPoints: files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(src, f)),
  outdir: next,
  outbase: src,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  write: false,
  logLevel: 'silent',
});
rmSync(next, { recursive: true, force: true });
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  // Our relative module names end in .ts (imports, import(), new URL('./worker-thread.ts')): here .js.
  const code = file.text.replace(/(['"])(\.\.?\/[^'"\n]*?)\.ts\1/g, '$1$2.js$1');
  writeFileSync(file.path, linkVendored(code, dirname(file.path)));
}
await vendor(next);
for (const f of files.filter((f) => !f.endsWith('.ts') || f.endsWith('.d.ts'))) {
  mkdirSync(dirname(join(next, f)), { recursive: true });
  copyFileSync(join(src, f), join(next, f));
}
// The public module's types (package.json's exports): what a user's TypeScript checks a scenario with.
const declarations = publicDeclarations(src);
for (const [name, text] of Object.entries(declarations)) writeFileSync(join(next, name), text);
const scenarios = await buildScenarios();
writeFileSync(join(next, 'stamp.json'), `${JSON.stringify(stamp)}\n`);
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
console.log(
  `build/: ${result.outputFiles.length} modules from src/, ${Object.keys(declarations).length} declaration files, ${scenarios} from scenarios/`,
);

/**
 * fastify, bundled into build/vendor/fastify.js with the licences of what it holds: the reference
 * server's only use of it. Installed as a package, fastify brings light-my-request (its inject helper,
 * a test-time need) and with it cookie 2, whose `engines` refuses Node 20: every user's `npm install`
 * on Node 20 warned. Bundled, the server runs the same code and users install none of it.
 */
async function vendor(into) {
  const outfile = join(into, 'vendor', 'fastify.js');
  const { metafile } = await build({
    stdin: {
      contents: "export { default } from 'fastify';",
      resolveDir: dirname(src),
      sourcefile: 'fastify.js',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    // fastify is CommonJS: its require() of Node's modules needs a require in an ES module.
    banner: {
      js: "import { createRequire as __require_ } from 'node:module'; const require = __require_(import.meta.url);",
    },
    outfile,
    metafile: true,
    logLevel: 'silent',
  });
  const packages = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
    if (match) packages.add(match[1]);
  }
  const notices = [...packages].sort().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    // A package that ships no licence file: what its manifest says of its licence and its authors.
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : notice(manifest);
    return `${manifest.name}@${manifest.version}\n\n${text}\n`;
  });
  writeFileSync(
    join(into, 'vendor', 'fastify.LICENSES.txt'),
    `build/vendor/fastify.js bundles these packages:\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`,
  );
}

function notice({ license, author, contributors, repository, homepage }) {
  const person = (p) =>
    typeof p === 'string' ? p : [p?.name, p?.email && `<${p.email}>`].filter(Boolean).join(' ');
  const by = [author, ...(contributors ?? [])].filter(Boolean).map(person).join(', ');
  const where = typeof repository === 'string' ? repository : (repository?.url ?? homepage);
  return [`License: ${license}`, by && `Copyright: ${by}`, where && `Source: ${where}`]
    .filter(Boolean)
    .join('\n');
}

/** A compiled module's import of fastify, pointed at the bundled copy (vendor() above). */
function linkVendored(code, dir) {
  const target = relative(dir, join(next, 'vendor', 'fastify.js'))
    .split(sep)
    .join('/');
  return code.replace(
    /(from\s*)(['"])fastify\2/g,
    `$1$2${target.startsWith('.') ? target : `./${target}`}$2`,
  );
}

/**
 * The scenarios shipped in scenarios/, stripped to build/scenarios/: where Node cannot strip types
 * (20), a run of one then loads no tsx (0.2 s and a hooks thread), and on any Node it shares build/'s
 * modules rather than loading src/'s beside them. Their imports are relinked to build/ (and to each
 * other); import.meta keeps naming the source file, so that a path made from it means what it did.
 * manifest.json holds a digest of each source's content: src/scenario/built-scenario.ts uses a copy
 * only while none of them has changed (by content: a checkout or npm's tarball changes every time). Not part of build/'s stamp: a scenario added or edited there
 * costs only its own load, never the CLI's build.
 */
async function buildScenarios() {
  const from = join(dirname(src), 'scenarios');
  const to = join(next, 'scenarios');
  const names = readdirSync(from, { recursive: true }).filter((f) => f.endsWith('.ts'));
  const manifest = {};
  for (const name of names) {
    const source = join(from, name);
    const target = join(to, name.replace(/\.ts$/, '.js'));
    let code;
    try {
      code = await stripScenario(source);
    } catch (error) {
      // A scenario being written may not compile yet: that is its run's to say, in one line, not the
      // build's (npm ci, npm test). With no copies at all, every scenario loads from its source.
      // esbuild's first line is only "Transform failed with 1 error:"; what and where follow it.
      const first = String(error?.message ?? error)
        .split('\n')
        .map((line) => line.trim())
        .find((line) => line && !/^Transform failed with/.test(line));
      console.error(`build/scenarios/: none (scenarios/${name} does not compile: ${first})`);
      rmSync(to, { recursive: true, force: true });
      return 0;
    }
    mkdirSync(dirname(target), { recursive: true });
    const dirs = {
      sourceDir: dirname(source),
      targetDir: dirname(target),
      src,
      builtSrc: next,
      scenarios: from,
      builtScenarios: to,
    };
    writeFileSync(target, relink(code, dirs));
    manifest[name.split(sep).join('/')] = contentDigest(source);
  }
  writeFileSync(join(to, 'manifest.json'), `${JSON.stringify(manifest)}\n`);
  return names.length;
}

/** One scenario's source, its types stripped; import.meta still names the source file. */
async function stripScenario(source) {
  const { code } = await transform(readFileSync(source, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: source,
    // As Node's own stripping does: an import is kept, whatever it imports.
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(source).href),
      'import.meta.filename': JSON.stringify(source),
      'import.meta.dirname': JSON.stringify(dirname(source)),
    },
  });
  return code;
}
