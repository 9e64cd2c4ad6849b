import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { asCheckpoint } from '../../src/cli/checkpoint.ts';
import { report } from '../../src/cli/report.ts';
import { emptyResult } from './real-run.ts';

/**
 * `petstore-load report RESULT.json [-o FILE]`, called as the yargs handler: where it writes, what
 * it prints, and the one-line InputError (exit code 2) for a file that is not a result.
 */

type Args = Parameters<typeof report>[0];
const args = (result: string, out?: string) => ({ result, out, _: ['report'], $0: 'petstore-load' }) as Args;

let dir: string;
let resultPath: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-report-cli-'));
  resultPath = join(dir, 'run', 'result.json');
  mkdirSync(join(dir, 'run'));
  writeFileSync(resultPath, JSON.stringify(await emptyResult()));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

async function printed(run: () => Promise<unknown>): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    await run();
    return log.mock.calls.map((c) => c.join(' ')).join('\n');
  } finally {
    log.mockRestore();
  }
}

describe('petstore-load report', () => {
  it('writes report.html beside the result by default', async () => {
    const out = join(dir, 'run', 'report.html');
    expect(await printed(() => report(args(resultPath)))).toBe(`report written to ${out}`);
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('writes where -o says, creating the folder', async () => {
    const out = join(dir, 'elsewhere', 'x.html');
    expect(await printed(() => report(args(resultPath, out)))).toBe(`report written to ${out}`);
    expect(existsSync(out)).toBe(true);
  });

  it('an -o that cannot be written: one line in words and exit 73', async () => {
    const blocker = join(dir, 'blocker');
    writeFileSync(blocker, 'a file, not a folder');
    const out = join(blocker, 'report.html');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await printed(async () => expect(await report(args(resultPath, out))).toBe(73))).toBe('');
      expect(stderr.mock.calls.map((c) => String(c[0]))).toEqual([
        `petstore-load: cannot write the report to ${out}: a part of the path is a file, not a directory (ENOTDIR)\n`,
      ]);
    } finally {
      stderr.mockRestore();
    }
  });

  it('reads a checkpoint a run left (result.partial.json), and says it is one, here and in the page', async () => {
    const checkpoint = join(dir, 'killed', 'result.partial.json');
    mkdirSync(join(dir, 'killed'));
    writeFileSync(checkpoint, JSON.stringify(asCheckpoint(await emptyResult())));
    const out = join(dir, 'killed', 'report.html');
    const lines = (await printed(() => report(args(checkpoint)))).split('\n');
    expect(lines).toEqual([
      `report written to ${out}`,
      expect.stringMatching(
        /^partial: .*result\.partial\.json: a checkpoint written while the run went on, its figures up to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
      ),
    ]);
    const page = readFileSync(out, 'utf8');
    expect(page).toContain('data-checkpoint="true"');
    expect(page).toMatch(/partial run<\/strong>: a checkpoint written while the run went on/);
  });

  it('refuses a file that is not a result, in one line with exit code 2', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ schemaVersion: 1, meta: {} }));
    const error = await report(args(bad)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).exitCode).toBe(2);
    expect((error as InputError).message).toMatch(/^result .*bad\.json: not a valid result: /);
    expect((error as InputError).message).not.toContain('\n');
  });

  it('refuses a result whose histogram is damaged, naming where, rather than failing inside the page', async () => {
    const damaged = JSON.parse(readFileSync(resultPath, 'utf8'));
    damaged.overall.histograms.response = Buffer.from('not a histogram').toString('base64');
    const bad = join(dir, 'damaged.json');
    writeFileSync(bad, JSON.stringify(damaged));
    const error = await report(args(bad)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toMatch(
      /damaged\.json: overall\.histograms\.response: not an HdrHistogram/,
    );
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
    expect((error as InputError).message).not.toContain('\n');
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
  });

  it('refuses a missing file and one that is not JSON', async () => {
    await expect(report(args(join(dir, 'none.json')))).rejects.toThrow(/none\.json: no such file/);
    const text = join(dir, 'text.json');
    writeFileSync(text, 'not json');
    await expect(report(args(text))).rejects.toThrow(/text\.json: not valid JSON/);
  });
});
