import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-workers-crash-'));
afterAll(() => {
  killAllClis();
  rmSync(dir, { recursive: true, force: true });
});

describe('run --workers 2 when one worker thread crashes', () => {
  it('keeps what the other measured, marked partial with the crash in one line, and does not hang', async () => {
    // The crashed worker never says its workload is done: the first must not wait for it to tear down.
    const out = join(dir, 'crash');
    const outcome = await runCli(
      ['run', 'test/fixtures/crashing-worker.ts', '--workers', '2', '--out', out],
      60_000,
    );
    expect(outcome.code, outcome.stderr).toBe(130);
    // The summary names the crash in its first line, by the error's first line alone: the fixture's
    // error carries a second line, as a stack would, which must show nowhere.
    const [first] = outcome.stdout.split('\n');
    expect(first, outcome.stdout).toMatch(/\(PARTIAL: a worker failed: worker 2 crashed: wild timer\)$/);
    expect(outcome.stdout.match(/wild timer/g), outcome.stdout).toHaveLength(1);
    expect(`${outcome.stdout}${outcome.stderr}`).not.toMatch(/at a line of its own stack|\n\s+at /);
    expect(outcome.stderr).not.toMatch(/wild timer|\bat\b/);
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    expect(result.meta.partial).toBe(true);
    expect(result.meta.interruptedBy).toBe('a worker failed: worker 2 crashed: wild timer');
    // The first worker's requests at least: it ran its share to the end.
    expect(result.overall.requests).toBeGreaterThan(3);
  }, 70_000);
});
