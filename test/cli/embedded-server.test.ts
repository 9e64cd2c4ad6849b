import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { embeddedServerOptions, spawnServer } from '../../src/cli/embedded-server.ts';
import { REPO } from '../helpers/integration-cli.ts';

const SERVER_BIN = join(REPO, 'bin', 'embedded-server.js');
const RECORDER = fileURLToPath(new URL('../helpers/record-loads.mjs', import.meta.url));

describe('the embedded server', () => {
  it("resolves serve's flags in the parent: a bad one is refused there, naming it, and nothing starts", async () => {
    await expect(embeddedServerOptions(['--limiter', 'nope'])).rejects.toThrow(/limiter/);
    await expect(spawnServer(['--time-scale', 'x'])).rejects.toBeInstanceOf(InputError);
    const options = await embeddedServerOptions(['--time-scale', '60', '--tenant-keys', 'free=2'], {
      PETSTORE_LOAD_TENANT_SEED: 'from-the-environment',
    });
    expect(options).toMatchObject({ port: 0, timeScale: 60, tenantKeys: { free: 2 } });
    expect(options.tenantSeed).toBe('from-the-environment');
  });

  it('serves as `serve` does, from a process that loads the server alone (no command line, no tables)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-load-embedded-'));
    const loads = join(dir, 'loaded.txt');
    const child = spawn(process.execPath, [`--import=${RECORDER}`, SERVER_BIN], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
      env: { ...process.env, PETSTORE_LOADS: loads },
    });
    try {
      child.send(await embeddedServerOptions(['--time-scale', '60']));
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (chunk) => {
          out += chunk;
          const match = /listening on (\S+)/.exec(out);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const answer = await fetch(`${url}/pets?limit=1`, {
        headers: { authorization: 'Bearer free-demo-key' },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit')).not.toBeNull();
      const loaded = readFileSync(loads, 'utf8');
      // fastify: the package in src/'s runs, its bundle in build/'s (scripts/build.mjs).
      expect(loaded).toMatch(/\/node_modules\/fastify\/|\/build\/vendor\/fastify\.js/);
      expect(loaded).toMatch(/\/(src|build)\/server\/child\.[jt]s/);
      expect(loaded).not.toMatch(/\/node_modules\/yargs\//);
      expect(loaded).not.toMatch(/\/(src|build)\/(cli|config)\//);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('started by hand, without its parent, says so in one line and exits 2', async () => {
    const child = spawn(process.execPath, [SERVER_BIN], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      'petstore-load: the embedded server is started by petstore-load itself',
    ]);
  });
});
