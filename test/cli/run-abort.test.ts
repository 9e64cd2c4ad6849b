import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `run --abort-on-fail` ends the run at the first failing second: judged on how soon it ended
 * against the wall clock, so it lives in a timing project (TIMING_LIGHT: one child, one request
 * at a time). Moved whole from test/cli/run-gates.test.ts, with the file's server and scenario.
 */

const TEST_TIMEOUT_MS = 90_000;
const RUN_TIMEOUT_MS = 45_000;

let dir: string;
let server: RunningServer;
let scenarioFile: string;
let counter = 0;
const fresh = (name: string) => join(dir, `${name}-${++counter}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-gates-'));
  server = await startServer({ timeScale: 10 });
  scenarioFile = join(dir, 'gated.ts');
  writeFileSync(
    scenarioFile,
    `export default {
  name: 'gated',
  workload: { executor: 'constant-vus', vus: 1, duration: '2s' },
  thresholds: ['listPets:p99<10s', { threshold: 'checks>=100%', abortOnFail: false }],
  flows: [{ name: 'list', run: async (api: { listPets(q: object): Promise<unknown> }) => { await api.listPets({ limit: 1 }); } }],
};
`,
  );
});

afterAll(async () => {
  killAllClis();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (out: string, extra: string[], env: Record<string, string> = {}) =>
  runCli(
    [
      'run',
      scenarioFile,
      '--base-url',
      server.url,
      '--api-key',
      'free-demo-key',
      '--time-scale',
      '10',
      '--out',
      out,
      ...extra,
    ],
    RUN_TIMEOUT_MS,
    env,
  );

describe('run as a CI gate: --abort-on-fail', () => {
  it(
    '--abort-on-fail ends the run at the first failing second: exit 1, a partial result that says why',
    () =>
      (async () => {
        const out = fresh('abort');
        const started = Date.now();
        const result = await run(out, ['--duration', '30s', '--threshold', 'rps>=100000', '--abort-on-fail']);
        expect(result.code, result.stderr).toBe(1);
        // Judged each second: far sooner than the 30 s asked for.
        expect(Date.now() - started).toBeLessThan(20_000);
        const written = readJson(join(out, 'result.json')) as RunResult;
        expect(resultProblem(written)).toBeUndefined();
        expect(written.meta).toMatchObject({ partial: true, interruptedBy: 'threshold rps>=100000' });
        expect(written.meta.durationSeconds).toBeLessThan(10);
        expect(written.thresholds?.find((t) => t.expression === 'rps>=100000')).toMatchObject({
          passed: false,
          aborted: true,
        });
        expect(result.stdout).toContain('(ended the run)');
      })(),
    TEST_TIMEOUT_MS,
  );
});
