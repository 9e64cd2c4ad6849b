import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkOutputDir, writeOutput, writeResultFile } from '../../src/cli/write-output.ts';
import {
  appendFileAtomic,
  createFileAtomic,
  makeDirectories,
  tryWritableDirectory,
  writeFileAtomic,
  writeRefusal,
} from '../../src/io/atomic-write.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * The one writer of every output: a temporary file beside the path, then a rename; a refusal of the
 * file system is one line in words and `false` (or the result's fallback directory), never a throw
 * that would cost the outputs still to write. As root every permission is granted, so a refusal is
 * made with a path that runs through a regular file (ENOTDIR), which no user may write under.
 */

let dir: string;
let file: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-atomic-'));
  file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

function stderrLines(): { lines: () => string[] } {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return { lines: () => spy.mock.calls.map((c) => String(c[0])) };
}

describe('writeFileAtomic and appendFileAtomic', () => {
  it('write the whole text, creating the folders, and leave no temporary file behind', () => {
    const path = join(dir, 'deep', 'er', 'out.txt');
    writeFileAtomic(path, 'first');
    writeFileAtomic(path, 'second');
    expect(readFileSync(path, 'utf8')).toBe('second');
    expect(readdirSync(join(dir, 'deep', 'er'))).toEqual(['out.txt']);
  });

  it('append: what the file held, then the text; a file that is not there yet is made', () => {
    const path = join(dir, 'summary.md');
    appendFileAtomic(path, 'one\n');
    appendFileAtomic(path, 'two\n');
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\n');
  });

  it('a refused path throws the system error and leaves nothing, the file in the way untouched', () => {
    const error = (() => {
      try {
        writeFileAtomic(join(file, 'out.txt'), 'text');
      } catch (e) {
        return e as NodeJS.ErrnoException;
      }
    })();
    expect(error?.code).toBe('ENOTDIR');
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
  });
});

describe('createFileAtomic', () => {
  it('makes a file that is not there, and leaves one that is as it was (false), no temporary file behind', () => {
    const path = join(dir, 'new', 'first.ts');
    expect(createFileAtomic(path, 'ours')).toBe(true);
    expect(createFileAtomic(path, 'again')).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('ours');
    expect(readdirSync(join(dir, 'new'))).toEqual(['first.ts']);
    expect(() => createFileAtomic(join(file, 'x.ts'), 'text')).toThrow(/ENOTDIR/);
  });
});

describe('makeDirectories and tryWritableDirectory', () => {
  const refusal = (act: () => unknown): string => {
    try {
      act();
    } catch (error) {
      return writeRefusal(error);
    }
    return 'no refusal';
  };

  it('procfs, where mkdir answers ENOENT under a directory that exists: a refusal in words at once, not a loop', () => {
    // Node's recursive mkdir spins for ever on it (the test would time out, not fail).
    const started = Date.now();
    expect(refusal(() => makeDirectories('/proc/petstore-load-x/y'))).toBe(
      'the file system makes no directory there (ENOENT)',
    );
    expect(refusal(() => writeFileAtomic('/proc/petstore-load-x/result.json', '{}'))).toBe(
      'the file system makes no directory there (ENOENT)',
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('makes what is missing, outermost first, and lists only what it made', () => {
    const base = mkdtempSync(join(dir, 'made-'));
    expect(makeDirectories(join(base, 'a', 'b'))).toEqual([join(base, 'a'), join(base, 'a', 'b')]);
    expect(makeDirectories(join(base, 'a', 'b'))).toEqual([]);
    expect(refusal(() => makeDirectories(join(file, 'x')))).toBe(
      'a part of the path is a file, not a directory (ENOTDIR)',
    );
  });

  it('a writable directory is tried and the disk left as it was; an unwritable one throws', () => {
    const base = mkdtempSync(join(dir, 'tried-'));
    tryWritableDirectory(join(base, 'out', 'run'));
    expect(readdirSync(base)).toEqual([]);
    const existing = mkdtempSync(join(dir, 'existing-'));
    writeFileSync(join(existing, 'kept.json'), '{}');
    tryWritableDirectory(existing);
    expect(readdirSync(existing)).toEqual(['kept.json']);
    expect(refusal(() => tryWritableDirectory(join(file, 'run')))).toBe(
      'a part of the path is a file, not a directory (ENOTDIR)',
    );
    expect(refusal(() => tryWritableDirectory(file))).toBe(
      'a part of the path is a file, not a directory (ENOTDIR)',
    );
  });
});

describe('checkOutputDir', () => {
  it('an unwritable --out is an InputError of exit 73 in one line', () => {
    expect(() => checkOutputDir('/proc/petstore-load-x')).toThrow(
      expect.objectContaining({
        exitCode: 73,
        message:
          'cannot write to --out /proc/petstore-load-x: the file system makes no directory there (ENOENT); nothing was started or sent',
      }),
    );
  });
});

describe('writeRefusal', () => {
  it.each([
    ['ENOSPC', 'no space left on the device (ENOSPC)'],
    ['EACCES', 'permission denied (EACCES)'],
    ['EROFS', 'the file system is read-only (EROFS)'],
    ['ENOTDIR', 'a part of the path is a file, not a directory (ENOTDIR)'],
    ['EXDEV', 'the system refused it (EXDEV)'],
  ])('%s reads as words', (code, words) => {
    expect(writeRefusal(Object.assign(new Error('a library message'), { code }))).toBe(words);
  });
});

describe('writeOutput and writeResultFile', () => {
  it('a refused output is one line in words and false; the next output is still written', () => {
    const stderr = stderrLines();
    expect(writeOutput(join(file, 'junit.xml'), '<x/>', 'JUnit XML')).toBe(false);
    expect(writeOutput(join(dir, 'ok.xml'), '<x/>', 'JUnit XML')).toBe(true);
    expect(stderr.lines()).toEqual([
      `petstore-load: cannot write the JUnit XML to ${join(file, 'junit.xml')}: a part of the path is a file, not a directory (ENOTDIR)\n`,
    ]);
    expect(readFileSync(join(dir, 'ok.xml'), 'utf8')).toBe('<x/>');
  });

  it('a result that cannot go where asked goes to $TMPDIR/petstore-load/NAME, said in one line', async () => {
    const fallbackRoot = mkdtempSync(join(dir, 'tmp-'));
    vi.stubEnv('TMPDIR', fallbackRoot);
    const stderr = stderrLines();
    const result = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    const written = writeResultFile(join(file, 'out'), result, 'run-name');
    const expected = join(fallbackRoot, 'petstore-load', 'run-name', 'result.json');
    expect(written).toEqual({ path: expected, failed: true });
    expect(JSON.parse(readFileSync(expected, 'utf8')).meta.scenario).toBe(result.meta.scenario);
    expect(stderr.lines()).toHaveLength(1);
    expect(stderr.lines()[0]).toMatch(
      /^petstore-load: cannot write the result to .*: a part of the path is a file, not a directory \(ENOTDIR\); it is in .*result\.json\n$/,
    );
  });

  it('nowhere to write it: one line naming both places, and no path', async () => {
    vi.stubEnv('TMPDIR', file);
    const stderr = stderrLines();
    const written = writeResultFile(
      join(file, 'out'),
      await syntheticResult([{ op: 'listPets', ms: 5 }]),
      'run-name',
    );
    expect(written).toEqual({ path: undefined, failed: true });
    expect(stderr.lines()).toHaveLength(1);
    expect(stderr.lines()[0]).toMatch(
      /cannot write the result to .*, nor to .*: a part of the path is a file/,
    );
  });
});
