import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  type CliOutcome,
  cliWorkspace,
  killCli,
  readJson,
  readTree,
  runCli,
  spawnCli,
  withTimeout,
} from '../helpers/integration-cli.ts';

/**
 * `petstore-load run` as users run it: a child process through bin/petstore-load.js, its summary,
 * its result.json, its exit codes, SIGINT, and the API key that must never show. Targets are either
 * the embedded server the command spawns itself or an in-process reference server (closed in
 * `finally`). Every child leads its own process group and is killed by pid when its test ends.
 */

/** Children at once: each start is ~1.5 s of CPU, and CI machines have 2 cores. */
const parallel = pLimit(3);
/** Per test: the wait for a slot in `parallel` plus the run itself, on a loaded machine. */
const TEST_TIMEOUT_MS = 90_000;
/** A short run (a few seconds of traffic, setup, teardown, two process starts) must end within this. */
const RUN_TIMEOUT_MS = 45_000;
/** A usage error ends before any traffic. */
const USAGE_TIMEOUT_MS = 20_000;

const freshDir = cliWorkspace('run').fresh;

function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function readResult(outDir: string): RunResult {
  return readJson(join(outDir, 'result.json')) as RunResult;
}

/** A usage error: one line on stderr naming the tool, no stack trace, nothing written, the exit code. */
function expectOneLineError(result: CliOutcome, code: number, mentions: RegExp, outDir: string): void {
  const context = `stdout: ${result.stdout}\nstderr: ${result.stderr}`;
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, context).toHaveLength(1);
  expect(lines[0]).toMatch(/^petstore-load: /);
  expect(lines[0]).toMatch(mentions);
  expect(result.stderr).not.toContain('    at ');
  expect(result.stdout).not.toContain('    at ');
  expect(result.signal).toBeNull();
  expect(result.code, context).toBe(code);
  expect(readTree(outDir), 'nothing written').toEqual([]);
}

const SCENARIO_SOURCE = `export default {
  name: 'tmp-scenario',
  workload: { executor: 'constant-vus', vus: 1, duration: '1s' },
  flows: [{ name: 'list', run: async (api: { listPets(q: object): Promise<unknown> }) => { await api.listPets({ limit: 1 }); } }],
};
`;

describe.concurrent('run: a whole run', () => {
  it(
    'mixed-traffic --duration 4s (embedded server): exit 0, a summary, a valid result.json, the server stopped',
    () =>
      parallel(async () => {
        const out = freshDir('embedded');
        const cli = spawnCli(['run', 'mixed-traffic', '--duration', '4s', '--out', out]);
        let serverGone: boolean;
        let result: CliOutcome;
        try {
          const { code, signal } = await withTimeout(cli.exited, RUN_TIMEOUT_MS, 'run mixed-traffic');
          result = { code, signal, stdout: cli.stdout(), stderr: cli.stderr() };
          // Before the process group is killed below: the run itself must have stopped its server.
          const target = /^mixed-traffic against (http:\/\/\S+) /m.exec(result.stdout)?.[1];
          serverGone = target !== undefined && !(await listening(target));
        } finally {
          killCli(cli);
        }
        const context = `stdout: ${result.stdout}\nstderr: ${result.stderr}`;
        expect(result.code, context).toBe(0);
        expect(result.stderr).toBe('');
        expect(result.stdout).toMatch(
          /^mixed-traffic against http:\/\/127\.0\.0\.1:\d+ \(embedded reference server\), plan free, /m,
        );
        expect(result.stdout).toMatch(/^operation\s+count\s+rate\/s\s+p50 ms/m);
        expect(result.stdout).toMatch(/^all\s+\d+\s/m);
        expect(result.stdout).toMatch(/^checks: all \d+ passed/m);
        expect(result.stdout).toContain(`result written to ${join(out, 'result.json')}`);

        const written = readResult(out);
        expect(resultProblem(written)).toBeUndefined();
        expect(written.meta).toMatchObject({
          scenario: 'mixed-traffic',
          embeddedTarget: true,
          partial: false,
        });
        expect(written.meta.interruptedBy).toBeUndefined();
        expect(written.overall.requests).toBeGreaterThan(10);
        expect(written.overall.statuses['401'] ?? 0).toBe(0);
        expect(written.workload.iterations).toBeGreaterThan(0);
        // The traffic part lasted about the 4 s asked for (plus at most the 2 s grace), not the scenario's 20 s.
        expect(written.meta.durationSeconds).toBeGreaterThanOrEqual(3.5);
        expect(written.meta.durationSeconds).toBeLessThan(12);
        expect(written.config.timeScale).toBe(10);
        // The embedded server went away with the run.
        expect(written.meta.target).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(serverGone).toBe(true);
      }),
    TEST_TIMEOUT_MS,
  );
});

describe.concurrent('run --contract: the rate-limit dialect promised', () => {
  /** 3 s of mixed-traffic against a server telling its Reset in seconds until it (@fastify/rate-limit's way). */
  const against = (contract: string[]) =>
    parallel(async () => {
      const server = await startServer({ timeScale: 10, headerDialect: 'seconds-until' });
      try {
        const out = freshDir('contract');
        const result = await runCli(
          [
            'run',
            '--base-url',
            server.url,
            '--api-key',
            'free-demo-key',
            '--time-scale',
            '10',
            '--duration',
            '3s',
            ...contract,
            '--out',
            out,
          ],
          RUN_TIMEOUT_MS,
        );
        return { result, written: readResult(out) };
      } finally {
        await server.close();
      }
    });

  it(
    'the dialect kept: every check passes, and the summary and the result name dialect and contract',
    async () => {
      const { result, written } = await against(['--contract', 'seconds-until']);
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
      expect(resultProblem(written)).toBeUndefined();
      expect(result.stdout).toMatch(/^checks: all \d+ passed/m);
      const answered = written.compliance.headerDialect?.counts['seconds-until'];
      expect(answered).toBeGreaterThan(0);
      expect(written.compliance.headerDialect).toEqual({
        contract: 'seconds-until',
        detected: 'seconds-until',
        alsoSent: [],
        counts: { 'seconds-until': answered },
      });
      expect(written.config.contract).toBe('seconds-until');
      expect(result.stdout).toContain(
        `rate-limit headers: seconds-until (X-RateLimit-*, Reset in seconds until the reset) on ${answered} of ${answered} responses; contract seconds-until (kept)`,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "by default the seed's: the dialect check alone fails, saying what came and what was promised",
    async () => {
      const { result, written } = await against([]);
      // A failing check fails no gate by itself: the run exits 0 unless a threshold says otherwise.
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
      expect(written.config.contract).toBe('seed');
      expect(result.stdout).toMatch(
        /^rate-limit headers: seconds-until .*; contract seed: not the dialect detected$/m,
      );
      expect(result.stdout).toMatch(/^checks: 1 failing:$/m);
      expect(result.stdout).toMatch(
        /^ {2}ratelimit-dialect-matches-contract: \d+ failed, e\.g\. \w+ \d+: X-RateLimit-Reset is seconds until the reset, as @fastify\/rate-limit sends; the contract promises a Unix time in seconds$/m,
      );
    },
    TEST_TIMEOUT_MS,
  );
});

describe.concurrent('run: the API key never shows', () => {
  const SECRET = 'sekret-key-0123456789abcdef';

  it.each([
    ['given with --api-key', true],
    ['given in PETSTORE_API_KEY', false],
  ])(
    '%s: absent from stdout, stderr and every file written',
    (_, asFlag) =>
      parallel(async () => {
        const server = await startServer({ keys: { [SECRET]: 'pro' }, timeScale: 10 });
        try {
          const out = freshDir('secret');
          const args = [
            'run',
            '--base-url',
            server.url,
            '--plan',
            'pro',
            '--time-scale',
            '10',
            '--duration',
            '3s',
          ];
          if (asFlag) args.push('--api-key', SECRET);
          args.push('--out', out);
          const result = await runCli(args, RUN_TIMEOUT_MS, {
            PETSTORE_API_KEY: asFlag ? undefined : SECRET,
          });
          expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);

          // The key was really used: the server (which knows no other key) answered 2xx, never 401.
          const written = readResult(out);
          expect(resultProblem(written)).toBeUndefined();
          expect(written.overall.statuses['200'] ?? 0).toBeGreaterThan(0);
          expect(written.overall.statuses['401'] ?? 0).toBe(0);
          expect(written.meta.plan).toBe('pro');
          expect(written.config.windows.map((w) => w.limit)).toContain(300);

          expect(result.stdout).not.toContain(SECRET);
          expect(result.stderr).not.toContain(SECRET);
          const files = readTree(out);
          expect(files.map((f) => f.path)).toContain(join(out, 'result.json'));
          for (const file of files) expect(file.content, file.path).not.toContain(SECRET);
        } finally {
          await server.close();
        }
      }),
    TEST_TIMEOUT_MS,
  );
});

describe.concurrent('run: bad input', () => {
  let badScenario: string;
  let moduleDir: string;
  let plainDir: string;

  beforeAll(() => {
    // A directory that is an ES module package, so that the file fails for its syntax alone.
    moduleDir = freshDir('module-scenarios');
    writeFileSync(join(moduleDir, 'package.json'), '{"type": "module"}\n');
    badScenario = join(moduleDir, 'broken.ts');
    writeFileSync(badScenario, "export default {\n  name: 'broken',,\n};\n");
    writeFileSync(join(moduleDir, 'fine.ts'), SCENARIO_SOURCE);
    // A directory with no package.json between it and the root (the temporary directory's).
    plainDir = freshDir('plain-scenarios');
    writeFileSync(join(plainDir, 'fine.ts'), SCENARIO_SOURCE);
  });

  const cases: [string, () => string[], number, RegExp][] = [
    ['an unknown scenario name', () => ['run', 'no-such-scenario-xyz'], 2, /no-such-scenario-xyz/],
    ['a scenario file with a syntax error', () => ['run', badScenario], 2, /broken\.ts: does not load/],
    ['--rate abc', () => ['run', '--rate', 'abc'], 2, /rate/],
    ['--duration 5x', () => ['run', '--duration', '5x'], 2, /--duration: '5x'/],
    ['--base-url notaurl', () => ['run', '--base-url', 'notaurl'], 2, /--base-url: 'notaurl'/],
    ['--contract ietf-9', () => ['run', '--contract', 'ietf-9'], 2, /contract.*ietf-9/],
    [
      'an unreachable --base-url http://127.0.0.1:1',
      () => ['run', '--base-url', 'http://127.0.0.1:1', '--api-key', 'k', '--duration', '1s'],
      3,
      /unreachable/,
    ],
  ];

  it.each(cases)(
    '%s: one line on stderr, the exit code',
    async (_, args, code, mentions) => {
      const out = freshDir('bad');
      expectOneLineError(await cliInProcess([...args(), '--out', out]), code, mentions, out);
    },
    TEST_TIMEOUT_MS,
  );

  // The process's own end, and a scenario file compiled by the bin's loader rather than this one's.
  it(
    'a scenario file with a syntax error ends the process itself: that one line, exit 2',
    async () => {
      const [, args, code, mentions] = cases[1] as (typeof cases)[number];
      const out = freshDir('bad');
      const result = await parallel(() => runCli([...args(), '--out', out], USAGE_TIMEOUT_MS));
      expectOneLineError(result, code, mentions, out);
    },
    TEST_TIMEOUT_MS,
  );

  /** Runs the scenario file `path` for 1 s against an in-process server. */
  const runFile = (path: string) =>
    parallel(async () => {
      const server = await startServer({ timeScale: 10 });
      try {
        const out = freshDir('file');
        const result = await runCli(
          [
            'run',
            path,
            '--base-url',
            server.url,
            '--api-key',
            'free-demo-key',
            '--time-scale',
            '10',
            '--out',
            out,
            '--quiet',
          ],
          RUN_TIMEOUT_MS,
        );
        return { result, out };
      } finally {
        await server.close();
      }
    });

  it(
    'a scenario file by path, in an ES module package, runs (the control for the case below)',
    async () => {
      const { result, out } = await runFile(join(moduleDir, 'fine.ts'));
      expect(result.code, result.stderr).toBe(0);
      expect(readResult(out).meta.scenario).toBe('tmp-scenario');
    },
    TEST_TIMEOUT_MS,
  );

  // Regression: a scenario outside an ES module package once failed to load (it is compiled as CommonJS).
  it(
    'a valid scenario file by path outside an ES module package runs',
    async () => {
      const { result, out } = await runFile(join(plainDir, 'fine.ts'));
      expect(result.code, result.stderr).toBe(0);
      expect(readResult(out).meta.scenario).toBe('tmp-scenario');
    },
    TEST_TIMEOUT_MS,
  );
});
