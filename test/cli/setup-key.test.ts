import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { outcomeContext as context, killAllClis, nonEmptyLines, runCli } from '../helpers/integration-cli.ts';

/**
 * A run against one's own target whose setup the target refused for its key: the line says so and
 * where a key comes from, with exit 2, whether no key was given or a wrong one (from the flag or the
 * environment). One in-process reference server, which wants a key for a write; each run a CLI.
 */

let dir: string;
let server: RunningServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-setup-key-'));
  server = await startServer({ timeScale: 10 });
});

afterAll(async () => {
  killAllClis();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const SOURCES = 'a key is given with --api-key or in PETSTORE_API_KEY';

describe.concurrent('setup refused for its key', () => {
  it.each([
    ['no key', [], {}, 'the target wants a key and none was given'],
    ['a wrong --api-key', ['--api-key', 'not-a-key'], {}, 'the target did not accept the key from --api-key'],
    [
      'a wrong PETSTORE_API_KEY',
      [],
      { PETSTORE_API_KEY: 'not-a-key' },
      'the target did not accept the key from PETSTORE_API_KEY',
    ],
  ])(
    '%s: exit 2, the 401 and where a key comes from, in one line',
    async (what, flags, env, words) => {
      const out = join(dir, what.replace(/\W+/g, '-'));
      const r = await runCli(
        [
          'run',
          'catalogue-browse',
          '--base-url',
          server.url,
          '--duration',
          '2s',
          '--out',
          out,
          '--quiet',
          ...flags,
        ],
        60_000,
        { PETSTORE_API_KEY: undefined, ...env },
      );
      expect(r.code, context(r)).toBe(2);
      expect(nonEmptyLines(r.stderr)).toEqual([
        `petstore-load: scenario catalogue-browse: setup failed: createCategory answered 401: ${words}; ${SOURCES}`,
      ]);
    },
    90_000,
  );

  it('a wrong PETSTORE_API_KEY sent to the embedded server: the line says its demo key is used without one', async () => {
    const out = join(dir, 'embedded');
    const r = await runCli(['run', 'catalogue-browse', '--duration', '2s', '--out', out, '--quiet'], 60_000, {
      PETSTORE_API_KEY: 'meant-for-my-own-target',
    });
    expect(r.code, context(r)).toBe(2);
    expect(nonEmptyLines(r.stderr)).toEqual([
      `petstore-load: scenario catalogue-browse: setup failed: createCategory answered 401: the target did not accept the key from PETSTORE_API_KEY; ${SOURCES}; without either, the embedded server's demo key for free is used`,
    ]);
  }, 90_000);
});
