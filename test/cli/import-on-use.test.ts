import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SPEC_PATH } from '../../src/api/spec.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import { loadedBy, NATIVE } from '../helpers/loaded-modules.ts';

const workspace = cliWorkspace('import-on-use');

/**
 * Each heavy dependency is loaded by the command that uses it, when it uses it: read from the
 * module graph the process loaded (a recorder hooked into Node's loader), not from a list of imports.
 */
const HEAVY = [
  'fastify', // the embedded server
  'ioredis', // --quota-store
  'autocannon', // bench
  'protobufjs', // --metrics remote write
  'snappyjs',
  '@redocly/openapi-core', // --spec
  'uplot', // the HTML report's charts
];
// Where Node strips types itself, tsx (and its esbuild) load only for a scenario that needs them.
const COMPILERS = ['tsx', 'esbuild'];

describe('a command loads what it uses, when it uses it', () => {
  it("a run loads undici's pool and hdr-histogram-js's JavaScript histograms, not their whole packages", async () => {
    const out = await loadedBy([
      'run',
      'catalogue-browse',
      '--duration',
      '1s',
      '--out',
      workspace.fresh('run'),
    ]);
    expect(out.code, out.stderr).toBe(0);
    // It sent (through the pool: Node 20's loader hooks see an import, not the pool's require) ...
    expect(out.stdout).toMatch(/^all +[1-9]\d* /m);
    // ... and the package's index, which an import of 'undici' loads, is not among the modules.
    const undici = out.urls.filter((u) => u.includes('/node_modules/undici/'));
    expect(undici.filter((u) => /\/undici\/(index\.js|lib\/web\/)/.test(u))).toEqual([]);
    // Nor hdr-histogram-js's index, its WebAssembly build, or pako (7 MB a thread between them).
    const wasm = out.urls.filter((u) =>
      /\/hdr-histogram-js\/dist\/(index|wasm\/)|\/(pako|@assemblyscript)\//.test(u),
    );
    expect(wasm).toEqual([]);
  });

  it('--help loads the option tables and yargs, and none of the heavy dependencies', async () => {
    const out = await loadedBy(['--help']);
    expect(out.code, out.stderr).toBe(0);
    // The recorder saw the process: our entry point and the parser.
    expect(out.ours).toContain('cli/main');
    expect(out.packages).toContain('yargs');
    const loaded = [...HEAVY, 'ajv', ...(NATIVE ? COMPILERS : [])].filter((p) => out.packages.has(p));
    expect(loaded).toEqual([]);
    // fastify as build/ bundles it is one of ours by path, not a package.
    expect([...out.ours].filter((m) => m.startsWith('vendor/'))).toEqual([]);
  });

  it('run --print-config loads none of the heavy dependencies; with --spec, the OpenAPI parser', async () => {
    const plain = await loadedBy(['run', '--print-config']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.ours).toContain('config/run');
    expect([...HEAVY, ...(NATIVE ? COMPILERS : [])].filter((p) => plain.packages.has(p))).toEqual([]);
    // Nor the run's execution side: the client (and undici), the engine, the report.
    expect(plain.packages).not.toContain('undici');
    expect([...plain.ours].filter((m) => m.startsWith('vendor/'))).toEqual([]);
    const executing = ['cli/run-execute', 'scenario/execute', 'client/client-core', 'report/html'];
    expect(executing.filter((m) => plain.ours.has(m))).toEqual([]);
    // The same check sees a package a flag asks for: a user's document is validated by @redocly/openapi-core.
    const spec = join(workspace.fresh('spec'), 'petstore.yaml');
    copyFileSync(DEFAULT_SPEC_PATH, spec);
    const withSpec = await loadedBy(['run', '--print-config', '--spec', spec]);
    expect(withSpec.code, withSpec.stderr).toBe(0);
    expect(withSpec.packages).toContain('@redocly/openapi-core');
  });
});
