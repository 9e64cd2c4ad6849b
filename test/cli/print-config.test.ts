import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliWorkspace, nonEmptyLines, outcomeContext, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `run --print-config` from the command line: the resolved configuration on stdout, the key nowhere,
 * nothing started or sent, and a run that then does what was printed.
 */

const TEST_TIMEOUT_MS = 60_000;
const USAGE_TIMEOUT_MS = 20_000;
const RUN_TIMEOUT_MS = 45_000;
const KEY = 'secret-xyz';

const freshDir = cliWorkspace('print-config').fresh;

/** A target that counts every request it gets (and would answer 503 to any). */
let target: Server;
let requests = 0;
let targetUrl: string;
beforeAll(async () => {
  target = createServer((_req, res) => {
    requests += 1;
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

// Side by side: a spawned CLI is mostly starting (~1.5 s of CPU) and waiting; the in-process
// command lines take turns meanwhile.
describe.concurrent('run --print-config', () => {
  it(
    'prints the resolved workload, the plan windows and the thresholds, exits 0, and shows no key',
    async () => {
      const r = await runCli(
        ['run', 'catalogue-browse', '--plan', 'pro', '--print-config', '--threshold', 'p95<250ms'],
        USAGE_TIMEOUT_MS,
        { PETSTORE_API_KEY: KEY },
      );
      expect(r.code, outcomeContext(r)).toBe(0);
      expect(r.stdout).not.toContain(KEY);
      expect(r.stderr).not.toContain(KEY);
      const config = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(config.scenario).toBe('catalogue-browse');
      expect(config.plan).toBe('pro');
      expect(config.workload).toMatchObject({ kind: 'open', executor: expect.any(String) });
      // Pro's minute, divided by the embedded server's time scale of 10.
      expect(config.windows).toContainEqual({ name: 'minute', limit: 300, seconds: 6 });
      expect(config.thresholds).toContain('p95<250ms');
      expect(config.apiKey).toBe('from PETSTORE_API_KEY');
      expect(config.target).toBe('embedded reference server');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'sends nothing to the target it names, and shows the target without its credentials',
    async () => {
      const withCredentials = targetUrl.replace('http://', 'http://admin:pw-hidden@');
      const r = await cliInProcess(
        ['run', 'catalogue-browse', '--plan', 'pro', '--base-url', withCredentials, '--print-config'],
        { PETSTORE_API_KEY: KEY },
      );
      expect(r.code, outcomeContext(r)).toBe(0);
      const text = r.stdout + r.stderr;
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('pw-hidden');
      expect((JSON.parse(r.stdout) as { target: string }).target).toBe(targetUrl);
      expect(requests).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a bad flag is still refused with one line and exit 2, before anything is printed',
    async () => {
      const r = await cliInProcess([
        'run',
        'catalogue-browse',
        '--print-config',
        '--auth-header',
        'not a header',
      ]);
      expect(r.code, outcomeContext(r)).toBe(2);
      expect(r.stdout).toBe('');
      const lines = nonEmptyLines(r.stderr);
      expect(lines, outcomeContext(r)).toHaveLength(1);
      expect(lines[0]).toMatch(/^petstore-load: --auth-header/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a flag of one value given twice is refused naming both, exit 2; a repeatable one takes both',
    async () => {
      const twice = await cliInProcess([
        'run',
        'catalogue-browse',
        '--rate',
        '15',
        '--rate',
        '20',
        '--print-config',
      ]);
      expect(twice.code, outcomeContext(twice)).toBe(2);
      expect(twice.stdout).toBe('');
      expect(twice.stderr).toBe('petstore-load: --rate was given 2 times (15, 20); give it once\n');
      const alias = await cliInProcess(['merge', 'a.json', '-o', 'x.json', '--out', 'y.json']);
      expect(alias.stderr).toMatch(
        /^petstore-load: --(out|o) was given 2 times \(x\.json, y\.json\); give it once\n$/,
      );
      const thresholds = await cliInProcess([
        ...['run', 'catalogue-browse', '--threshold', 'p99<1s', '--threshold', 'errors<1%', '--print-config'],
      ]);
      expect(thresholds.code, outcomeContext(thresholds)).toBe(0);
      expect((JSON.parse(thresholds.stdout) as { thresholds: string[] }).thresholds).toEqual([
        'p99<1s',
        'errors<1%',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'shows a ramping workload as --duration makes it run: 5s and 60s print different stages',
    async () => {
      const print = async (duration: string) => {
        const r = await cliInProcess(['run', 'shopper-checkout', '--duration', duration, '--print-config']);
        expect(r.code, outcomeContext(r)).toBe(0);
        return (JSON.parse(r.stdout) as { workload: { durationMs: number; stages: { ms: number }[] } })
          .workload;
      };
      const [short, long] = await Promise.all([print('5s'), print('60s')]);
      expect(short.durationMs).toBe(5000);
      expect(long.durationMs).toBe(60_000);
      // The stages shown add up to the run's length: cut short, or the last target held to the end.
      const total = (w: { stages: { ms: number }[] }) => w.stages.reduce((sum, s) => sum + s.ms, 0);
      expect(total(short)).toBe(5000);
      expect(total(long)).toBe(60_000);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a run does what --print-config said it would: the same workload, plan windows and seed in result.json',
    async () => {
      const flags = [
        'run',
        'catalogue-browse',
        '--plan',
        'pro',
        '--duration',
        '2s',
        '--seed',
        '4242',
        '--quiet',
      ];
      const shown = await cliInProcess([...flags, '--print-config'], {
        PETSTORE_API_KEY: undefined,
      });
      expect(shown.code, outcomeContext(shown)).toBe(0);
      const config = JSON.parse(shown.stdout) as {
        workload: Record<string, unknown>;
        plan: string;
        windows: unknown;
        seed: number;
        timeScale: number;
        enforce: boolean;
        timeoutMs: number;
        maxAttempts: number;
        spec: string;
      };
      const out = freshDir('run');
      const ran = await runCli([...flags, '--out', out], RUN_TIMEOUT_MS, { PETSTORE_API_KEY: undefined });
      expect(ran.code, outcomeContext(ran)).toBe(0);
      const result = readJson(join(out, 'result.json')) as RunResult;
      const { kind: _kind, ...workload } = config.workload;
      expect(result.config.workload).toEqual(workload);
      expect(result.meta.plan).toBe(config.plan);
      expect(result.config.windows).toEqual(config.windows);
      expect(result.config.seed).toBe(config.seed);
      for (const field of ['timeScale', 'enforce', 'timeoutMs', 'maxAttempts', 'spec'] as const)
        expect(result.config[field], field).toEqual(config[field]);
      expect(config.seed).toBe(4242);
    },
    TEST_TIMEOUT_MS,
  );
});
