import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `run` as a CI gate: thresholds from the scenario and the command line, the exit code they give,
 * abortOnFail, and the files a pipeline reads (report.html, JUnit, markdown, GitHub's step summary).
 * One in-process reference server for the file; each run is a child process of its own.
 */

const parallel = pLimit(3);
const TEST_TIMEOUT_MS = 90_000;
const RUN_TIMEOUT_MS = 45_000;

let dir: string;
let server: RunningServer;
let scenarioFile: string;
let counter = 0;
const KEYS = 16;
let keysUsed = 0;
const fresh = (name: string) => join(dir, `${name}-${++counter}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-load-gates-'));
  // A key per run: runs side by side on one key would share its quota, and meet each other's 429s.
  const keys = Object.fromEntries(Array.from({ length: KEYS }, (_, i) => [`free-${i + 1}`, 'free']));
  server = await startServer({ timeScale: 10, keys });
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

const gated = (out: string, extra: string[]) => [
  'run',
  scenarioFile,
  '--base-url',
  server.url,
  '--api-key',
  `free-${(keysUsed++ % KEYS) + 1}`,
  '--time-scale',
  '10',
  '--out',
  out,
  ...extra,
];
const run = (out: string, extra: string[], env: Record<string, string> = {}) =>
  runCli(gated(out, extra), RUN_TIMEOUT_MS, env);
/** A command line refused before any traffic, in this process (the runs above start the bin). */
const refused = (out: string, extra: string[]) => cliInProcess(gated(out, extra));

describe.concurrent('run as a CI gate', () => {
  it(
    'thresholds that hold: exit 0, verdicts in result.json, report.html, JUnit, markdown and the step summary',
    () =>
      parallel(async () => {
        const out = fresh('pass');
        const junit = join(dir, `junit-${counter}.xml`);
        const md = join(dir, `summary-${counter}.md`);
        const stepSummary = join(dir, `step-${counter}.md`);
        writeFileSync(stepSummary, '# earlier step\n');
        const result = await run(
          out,
          ['--threshold', 'errors<1%', '--threshold', 'violations==0', '--junit', junit, '--summary-md', md],
          { GITHUB_STEP_SUMMARY: stepSummary },
        );
        const context = `${result.stdout}\n${result.stderr}`;
        expect(result.code, context).toBe(0);
        const written = readJson(join(out, 'result.json')) as RunResult;
        expect(resultProblem(written)).toBeUndefined();
        expect(written.thresholds?.map((t) => [t.expression, t.source, t.passed])).toEqual([
          ['listPets:p99<10s', 'scenario', true],
          ['checks>=100%', 'scenario', true],
          ['errors<1%', 'cli', true],
          ['violations==0', 'cli', true],
        ]);
        expect(result.stdout).toContain('thresholds: all 4 passed');
        expect(readdirSync(out).sort()).toEqual(['report.html', 'result.json']);
        expect(result.stdout).toContain(`report written to ${join(out, 'report.html')}`);
        expect(XMLValidator.validate(readFileSync(junit, 'utf8'))).toBe(true);
        expect(readFileSync(md, 'utf8')).toMatch(/^### ✅ petstore-load: gated: thresholds: 4 of 4 passed/);
        const step = readFileSync(stepSummary, 'utf8');
        expect(step.startsWith('# earlier step\n### ✅')).toBe(true);
        // Not a terminal: no live status line, no carriage returns in the log.
        expect(result.stderr).not.toContain('\r');
        expect(result.stderr).not.toContain('\x1b[2K');
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'a threshold that fails: exit 1, the result and report still written, the summary says which',
    () =>
      parallel(async () => {
        const out = fresh('fail');
        const result = await run(out, ['--threshold', 'requests>=1000000']);
        expect(result.code, result.stderr).toBe(1);
        const written = readJson(join(out, 'result.json')) as RunResult;
        const failed = written.thresholds?.find((t) => t.expression === 'requests>=1000000');
        expect(failed).toMatchObject({ passed: false, source: 'cli' });
        expect(failed?.detail).toMatch(/requests was \d+, wanted >= 1000000/);
        expect(written.meta.partial).toBe(false);
        expect(result.stdout).toMatch(/thresholds: 1 of 3 FAILED/);
        expect(result.stdout).toMatch(/FAIL {2}requests>=1000000/);
        expect(existsSync(join(out, 'report.html'))).toBe(true);
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'a malformed --threshold: one line, exit 2, before any traffic',
    () =>
      parallel(async () => {
        const out = fresh('malformed');
        const before = server.store.listPets({}, { limit: 1000, offset: 0 }).length;
        const result = await refused(out, ['--threshold', 'p99<fast']);
        expect(result.code).toBe(2);
        const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
        expect(lines).toEqual([
          expect.stringMatching(/^petstore-load: threshold 'p99<fast': .*not a number/),
        ]);
        expect(existsSync(out)).toBe(false);
        expect(server.store.listPets({}, { limit: 1000, offset: 0 }).length).toBe(before);
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    '--baseline: the comparison follows the summary; within tolerance, exit 0',
    () =>
      parallel(async () => {
        const first = fresh('baseline');
        const baselineRun = await run(first, []);
        expect(baselineRun.code, `${baselineRun.stdout}\n${baselineRun.stderr}`).toBe(0);
        const out = fresh('against-baseline');
        const baseline = join(first, 'result.json');
        // Tolerances no noise can exceed: the verdict is certain, the wiring is what is tested.
        const loose = 'p50=1000%,p95=1000%,p99=1000%,rps=1000%,errors=100%,rate_limited=100%';
        const result = await run(out, ['--baseline', baseline, '--max-regression', loose]);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toContain(`baseline ${baseline}: gated,`);
        expect(result.stdout).toMatch(/listPets/);
        expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/^verdict: no regression/);
      }),
    TEST_TIMEOUT_MS,
  );

  it(
    'a baseline that is missing or not a result, or tolerances without one: exit 2 before any traffic',
    () =>
      parallel(async () => {
        const notResult = join(dir, 'not-a-result.json');
        writeFileSync(notResult, '{"schemaVersion": 1}');
        for (const [extra, message] of [
          [['--baseline', join(dir, 'missing.json')], /--baseline.*missing\.json/],
          [['--baseline', notResult], /--baseline .*not-a-result\.json/],
          [['--max-regression', 'p99=10%'], /--max-regression needs --baseline/],
          [['--baseline', notResult, '--max-regression', 'p99=10'], /p99=10/],
        ] as const) {
          const out = fresh('bad-baseline');
          const result = await refused(out, [...extra]);
          expect(result.code, `${extra.join(' ')}: ${result.stderr}`).toBe(2);
          const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
          expect(lines).toHaveLength(1);
          expect(lines[0]).toMatch(message);
          expect(existsSync(out)).toBe(false);
        }
      }),
    TEST_TIMEOUT_MS,
  );
});
