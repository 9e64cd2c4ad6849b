import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { Checkpoints } from '../../src/cli/checkpoint.ts';
import { CHECKPOINT_FILE, parseCheckpointInterval } from '../../src/config/checkpoint.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { readJson } from '../helpers/integration-cli.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';

/**
 * `run`'s checkpoints (src/cli/checkpoint.ts) with a result made up here and intervals of 20 ms:
 * what is written, where, when it goes, and what a refused write says. The run's own checkpoints,
 * and one left by a run killed outright: test/cli/crash-safety.test.ts.
 */

let dir: string;
let blocker: string;
let result: RunResult;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-checkpoint-'));
  blocker = join(dir, 'a-file');
  writeFileSync(blocker, 'not a directory');
  result = await syntheticResult([
    { op: 'listPets', ms: 5 },
    { op: 'getPetById', ms: 7 },
  ]);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** Waits (20 ms steps, 5 s at most) until `done` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > 5_000) throw new Error(`not within 5 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function checkpoints(out: string, take: () => RunResult | undefined = () => structuredClone(result)) {
  return new Checkpoints({ intervalMs: 20, take, dirOf: () => out });
}

describe('--checkpoint', () => {
  it.each([
    ['10s', 10_000],
    ['1.5m', 90_000],
    ['off', 0],
    ['0', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseCheckpointInterval(text)).toBe(ms);
  });

  it.each([
    ['10', /--checkpoint: '10' is not a duration/],
    ['500ms', /--checkpoint: '500ms' is under 1s/],
    ['soon', /--checkpoint: 'soon' is not a duration/],
  ])('%s is refused in one line', (text, message) => {
    expect(() => parseCheckpointInterval(text)).toThrow(InputError);
    expect(() => parseCheckpointInterval(text)).toThrow(message);
    expect(() => parseCheckpointInterval(text)).toThrow(/^[^\n]+$/);
  });
});

describe('Checkpoints', () => {
  it('writes the result so far, valid, marked partial and a checkpoint, with no temporary file left', async () => {
    const out = join(dir, 'written');
    const c = checkpoints(out);
    c.start();
    await until(() => c.costs.length >= 2, 'two checkpoints');
    await c.stop();
    const written = readJson(join(out, CHECKPOINT_FILE)) as RunResult;
    expect(resultProblem(written)).toBeUndefined();
    expect(written.meta).toMatchObject({ partial: true, checkpoint: true });
    expect(written.overall.requests).toBe(2);
    expect(readdirSync(out)).toEqual([CHECKPOINT_FILE]);
  });

  it('writes nothing while there is nothing to write, and nothing after stop', async () => {
    const out = join(dir, 'nothing');
    let ready = false;
    const c = checkpoints(out, () => (ready ? structuredClone(result) : undefined));
    c.start();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(out)).toBe(false);
    ready = true;
    await until(() => c.costs.length >= 1, 'a checkpoint once there is a result');
    await c.stop();
    const count = c.costs.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(c.costs.length).toBe(count);
  });

  it('goes once the final result is written beside it, and stays when it went elsewhere', async () => {
    const out = join(dir, 'finished');
    const c = checkpoints(out);
    c.start();
    await until(() => c.costs.length >= 1, 'a checkpoint');
    await c.stop();
    c.finish(join(dir, 'elsewhere'));
    expect(existsSync(join(out, CHECKPOINT_FILE))).toBe(true);
    c.finish(undefined);
    expect(existsSync(join(out, CHECKPOINT_FILE))).toBe(true);
    c.finish(out);
    expect(existsSync(join(out, CHECKPOINT_FILE))).toBe(false);
  });

  it('a refused write is one line in words, said once, and the checkpoints go on trying', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let asked = 0;
    const c = checkpoints(join(blocker, 'out'), () => {
      asked++;
      return structuredClone(result);
    });
    c.start();
    await until(() => asked >= 4, 'four checkpoints tried');
    await c.stop();
    expect(stderr.mock.calls.map((call) => String(call[0]))).toEqual([
      `petstore-load: cannot write the checkpoint to ${join(blocker, 'out', CHECKPOINT_FILE)}: a part of the path is a file, not a directory (ENOTDIR); the run goes on without one\n`,
    ]);
    expect(c.costs).toEqual([]);
  });
});
