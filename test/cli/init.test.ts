import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { init } from '../../src/cli/init.ts';
import type { RunResult } from '../../src/result/types.ts';
import { cliWorkspace, nonEmptyLines, outcomeContext, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `petstore-load init` as a new user runs it: in an empty folder it writes a first typed scenario,
 * its types and a tsconfig.json, and prints one command; that command, run as printed (a short
 * duration added), runs the scenario against the embedded server and writes its result. Run again,
 * or beside files of the user's own, it overwrites nothing and says what it skipped.
 */

const TIMEOUT_MS = 90_000;
const CLI_MS = 60_000;
const freshDir = cliWorkspace('init').fresh;
const FILES = ['load/first.ts', 'load/api-types.ts', 'tsconfig.json'];

/** init in this process, in `dir`: what it printed and its exit code. */
async function initIn(dir: string, args: { spec?: string; name?: string } = {}) {
  let out = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    const code = await init({ name: 'first', spec: undefined, ...args, _: [], $0: 'petstore-load' }, dir);
    return { code, lines: nonEmptyLines(out) };
  } finally {
    write.mockRestore();
  }
}

describe('petstore-load init', () => {
  it(
    'scaffolds a scenario whose printed command runs as it is, then overwrites nothing when run again',
    async () => {
      const dir = freshDir('empty');
      const made = await runCli(['init'], CLI_MS, {}, [], dir);
      expect(made.code, outcomeContext(made)).toBe(0);
      const lines = nonEmptyLines(made.stdout);
      expect(lines.slice(0, 3)).toEqual(FILES.map((f) => `wrote ${f}`));
      expect(lines.at(-2)).toBe('Run it:');
      const command = lines.at(-1)?.trim() ?? '';
      expect(command).toBe('npx petstore-load run load/first.ts');

      const args = command.split(' ').slice(2);
      const ran = await runCli([...args, '--duration', '2s', '--out', 'out'], CLI_MS, {}, [], dir);
      expect(ran.code, outcomeContext(ran)).toBe(0);
      const result = readJson(join(dir, 'out', 'result.json')) as RunResult;
      expect(result.meta.scenario).toBe('first');
      expect(Object.keys(result.operations).sort()).toEqual(['listCategories', 'listPets']);
      expect(result.overall.requests).toBeGreaterThan(0);

      const before = FILES.map((f) => [readFileSync(join(dir, f), 'utf8'), statSync(join(dir, f)).mtimeMs]);
      const again = await initIn(dir);
      expect(again.code).toBe(0);
      expect(again.lines.slice(0, 3)).toEqual(FILES.map((f) => `skipped ${f}: it exists`));
      expect(again.lines.at(-1)?.trim()).toBe(command);
      expect(FILES.map((f) => [readFileSync(join(dir, f), 'utf8'), statSync(join(dir, f)).mtimeMs])).toEqual(
        before,
      );
    },
    TIMEOUT_MS,
  );

  it("keeps the user's own tsconfig.json, and writes what is missing beside it", async () => {
    const dir = freshDir('theirs');
    writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }\n');
    const made = await initIn(dir, {
      name: 'rooms',
      spec: join(import.meta.dirname, '..', 'fixtures', 'openapi', 'bookings.yaml'),
    });
    expect(made.code).toBe(0);
    expect(made.lines.slice(0, 3)).toEqual([
      'wrote load/rooms.ts',
      'wrote load/api-types.ts',
      'skipped tsconfig.json: it exists',
    ]);
    expect(readFileSync(join(dir, 'tsconfig.json'), 'utf8')).toBe(
      '{ "compilerOptions": { "strict": true } }\n',
    );
    expect(made.lines.at(-1)).toMatch(
      /^ {2}PETSTORE_API_KEY=<your key> npx petstore-load run load\/rooms\.ts --spec \S+bookings\.yaml --base-url https:\/\/eu\.bookings\.example\.test\/v1$/,
    );
    expect(readFileSync(join(dir, 'load', 'api-types.ts'), 'utf8')).toContain('getRoom: {');
  });
});
