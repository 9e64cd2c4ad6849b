import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { killAllClis, readJson, readTree, runCli } from '../helpers/integration-cli.ts';

/**
 * `petstore-load run compliance`: every probe passes against the embedded reference server, and the
 * matching probe fails (exit 1) against one whose 429s lack Retry-After. Each run is a child process.
 */

const TEST_TIMEOUT_MS = 90_000;
/** The bound for the whole battery against the embedded (time-scaled) server. */
const RUN_TIMEOUT_MS = 120_000;
const PROBES = [
  'auth-missing-key',
  'auth-unknown-key',
  'invalid-json',
  'missing-required-field',
  'wrong-content-type',
  'unknown-id',
  'deprecated-headers',
  'over-quota-429',
];

let dir: string;
let faulty: RunningServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-compliance-'));
  faulty = await startServer({ timeScale: 10, faults: { noRetryAfter: true } });
});

afterAll(async () => {
  killAllClis();
  await faulty?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.concurrent('run compliance', () => {
  it(
    'against the embedded server: every probe passes, in the terminal, result.json and report.html; exit 0',
    async () => {
      const out = join(dir, 'embedded');
      const run = await runCli(['run', 'compliance', '--out', out], RUN_TIMEOUT_MS);
      expect(run.code, run.stderr).toBe(0);
      const result = readJson(join(out, 'result.json')) as RunResult;
      expect(resultProblem(result)).toBeUndefined();
      expect(result.probes?.map((p) => [p.id, p.passed])).toEqual(PROBES.map((id) => [id, true]));
      const overQuota = result.probes?.at(-1);
      expect(overQuota?.actual).toMatch(/^429 Error \(rate_limited\) after \d+ requests; Retry-After \d+;/);
      // The probe stops at the first 429 and the key then waits: no ban, no request inside Retry-After.
      expect(result.compliance.rateLimited).toBe(1);
      expect(result.compliance.violations).toBe(0);
      expect(result.checks.filter((c) => c.failures > 0).map((c) => c.id)).toEqual([]);
      expect(run.stdout).toContain('probes: all 8 passed');
      expect(run.stdout).toMatch(/ok {4}over-quota-429 +expected 429 Error/);
      expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('data-probes="passed"');
      // Neither the demo key nor the made-up one is written anywhere.
      for (const file of readTree(out)) expect(file.content).not.toMatch(/demo-key|compliance-probe-/);
      expect(run.stdout + run.stderr).not.toMatch(/demo-key|compliance-probe-/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    '429s without Retry-After: over-quota-429 fails and only it; exit 1 saying which',
    async () => {
      const out = join(dir, 'faulty');
      const run = await runCli(
        [
          'run',
          'compliance',
          '--base-url',
          faulty.url,
          '--api-key',
          'free-demo-key',
          '--time-scale',
          '10',
          '--out',
          out,
        ],
        RUN_TIMEOUT_MS,
      );
      expect(run.code, run.stderr).toBe(1);
      const result = readJson(join(out, 'result.json')) as RunResult;
      expect(resultProblem(result)).toBeUndefined();
      expect(result.probes?.filter((p) => !p.passed).map((p) => p.id)).toEqual(['over-quota-429']);
      expect(result.probes?.at(-1)?.detail).toContain('Retry-After missing');
      expect(run.stdout).toContain('probes: 1 of 8 FAILED');
      expect(run.stdout).toMatch(/FAIL {2}over-quota-429/);
      expect(run.stderr).toContain('1 probe failed: over-quota-429');
      const page = readFileSync(join(out, 'report.html'), 'utf8');
      expect(page).toContain('data-probes="failed"');
      expect(page).toContain('data-probe="over-quota-429" class="failing"');
    },
    TEST_TIMEOUT_MS,
  );
});
