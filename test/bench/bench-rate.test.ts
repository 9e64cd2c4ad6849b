import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `bench --rate` holds its rate: a count of requests over two seconds of wall clock, which a busy
 * neighbour could cut short, so it lives in a timing project (TIMING_LIGHT: 100 requests a second on
 * loopback, mostly waiting). Moved whole from test/bench/bench-cli.test.ts.
 */

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-bench-rate-'));
afterAll(() => {
  killAllClis();
  rmSync(dir, { recursive: true, force: true });
});

async function bench(name: string, args: string[]) {
  const out = join(dir, name);
  const outcome = await runCli(['bench', '--duration', '2s', '--out', out, ...args], 60_000);
  const context = `${outcome.stdout}\n${outcome.stderr}`;
  const result = readJson(join(out, 'result.json')) as RunResult;
  return { ...outcome, context, result };
}

describe('petstore-load bench --rate (embedded server)', () => {
  it('holds a fixed rate: about rate x duration requests, corrected response time', async () => {
    const run = await bench('rate', [
      '--rate',
      '100',
      '--connections',
      '4',
      '--operations',
      'getPetById,listPets',
    ]);
    expect(run.code, run.context).toBe(0);
    expect(resultProblem(run.result)).toBeUndefined();
    expect(run.result.config.workload).toMatchObject({ rate: 100, connections: 4 });
    // 200 planned; a loaded machine may fall short, never far over (requests sent after the window are not counted).
    expect(run.result.overall.requests).toBeGreaterThanOrEqual(120);
    expect(run.result.overall.requests).toBeLessThanOrEqual(210);
    expect(run.result.overall.response.count).toBeGreaterThanOrEqual(run.result.overall.requests);
  }, 60_000);
});
