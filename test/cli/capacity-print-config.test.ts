import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, getPlan, scalePlan } from '../../src/api/plans.ts';
import type { RunResult } from '../../src/result/types.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliWorkspace, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `capacity --print-config`: the resolved configuration as JSON, exit 0, the key only as where it
 * came from, nothing started and nothing sent; and a short run whose result holds what was printed.
 */
const KEY = 'secret-xyz';
const workspace = cliWorkspace('capacity-print-config');

// A target that counts what reaches it: --print-config must send it nothing.
let requests = 0;
let target: Server;
let baseUrl: string;
beforeAll(async () => {
  target = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

function expectNoKey(outcome: { stdout: string; stderr: string }): void {
  expect(outcome.stdout).not.toContain(KEY);
  expect(outcome.stderr).not.toContain(KEY);
}

describe('petstore-load capacity --print-config', () => {
  it('prints the plan probed, its windows and the timeout; the key as where it came from; sends nothing', async () => {
    const outcome = await runCli(
      ['capacity', '--base-url', baseUrl, '--api-key', `pro=${KEY}`, '--timeout', '4s', '--print-config'],
      20_000,
      { PETSTORE_API_KEY: KEY },
    );
    expect(outcome.code).toBe(0);
    expectNoKey(outcome);
    expect(outcome.stderr).toBe('');
    const printed = JSON.parse(outcome.stdout);
    expect(printed.target).toBe(`${baseUrl}/`);
    expect(printed.timeoutMs).toBe(4000);
    expect(printed.plans.pro.key).toBe('from --api-key pro');
    expect(printed.plans.pro.windows).toEqual(DEFAULT_PLANS.pro?.windows);
    expect(printed.auth.listPets.placement).toBe('header authorization: Bearer');
    // Without --max-wait: the plan's longest window (a day, unscaled), capped at 10 minutes.
    expect(printed.plans.pro.maxWaitMs).toBe(600_000);
    expect(requests).toBe(0);
  });

  it('--max-wait: the longest wait each plan accepts, as given; by default its longest window, at least a minute', async () => {
    const given = await cliInProcess([
      'capacity',
      '--api-key',
      'free=k',
      '--max-wait',
      '90s',
      '--print-config',
    ]);
    expect(given.code).toBe(0);
    expect(JSON.parse(given.stdout).plans.free.maxWaitMs).toBe(90_000);
    // The embedded server at time scale 10 000: a day of 8.64 s, so the floor of a minute.
    const fast = await cliInProcess([
      'capacity',
      '--api-key',
      'free=k',
      '--time-scale',
      '10000',
      '--print-config',
    ]);
    expect(JSON.parse(fast.stdout).plans.free.maxWaitMs).toBe(60_000);
    // At time scale 100, the day's 864 s is past the cap of 10 minutes.
    const slow = await cliInProcess([
      'capacity',
      '--api-key',
      'free=k',
      '--time-scale',
      '100',
      '--print-config',
    ]);
    expect(JSON.parse(slow.stdout).plans.free.maxWaitMs).toBe(600_000);
    // At time scale 1000, 86.4 s: the day itself.
    const day = await cliInProcess([
      'capacity',
      '--api-key',
      'free=k',
      '--time-scale',
      '1000',
      '--print-config',
    ]);
    expect(JSON.parse(day.stdout).plans.free.maxWaitMs).toBe(86_400);
  });

  it("--tenants: the mix, its plans, the step and the file's tenants, keys as where they came from; sends nothing", async () => {
    const keys = join(workspace.fresh('keys'), 'keys.csv');
    writeFileSync(keys, `plan,key\npro,${KEY}\n`);
    const outcome = await cliInProcess(
      ['capacity', '--tenants', 'pro', '--base-url', baseUrl, '--tenants-file', keys, '--print-config'],
      { PETSTORE_API_KEY: KEY },
    );
    expect(outcome.code).toBe(0);
    expectNoKey(outcome);
    const printed = JSON.parse(outcome.stdout);
    expect(printed.command).toBe('capacity --tenants');
    expect(printed.mix).toEqual({ pro: 1 });
    expect(printed.plans.pro.scaledWindows).toEqual(DEFAULT_PLANS.pro?.windows);
    expect(printed.stepMs).toBe(5000);
    expect(printed.tenantKeys).toBe(`from --tenants-file ${keys}`);
    // The file was read and checked: its one tenant, shown by where its key came from.
    expect(printed.tenantsInFile).toEqual({ pro: [`from --tenants-file ${keys}, tenant 1`] });
    expect(printed.rampUpTo).toBe(1);
    expect(requests).toBe(0);
  });

  it('--tenants with a bad --tenants-file is refused in one line, exit 2, before anything is printed', async () => {
    const keys = join(workspace.fresh('bad-keys'), 'keys.csv');
    writeFileSync(keys, `plan,key\nfree,${KEY}\n`);
    const outcome = await cliInProcess([
      'capacity',
      '--tenants',
      'pro',
      '--base-url',
      baseUrl,
      '--tenants-file',
      keys,
      '--print-config',
    ]);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expectNoKey(outcome);
    expect(outcome.stderr.trim().split('\n')).toEqual([
      `petstore-load: --tenants-file ${keys}: no key of plan 'pro'`,
    ]);
    expect(requests).toBe(0);
  });

  it('--timeout 10 (no unit) is refused in one line, exit 2, before anything is printed', async () => {
    for (const extra of [[], ['--tenants', 'pro']]) {
      const outcome = await cliInProcess(['capacity', ...extra, '--timeout', '10', '--print-config']);
      expect(outcome.code).toBe(2);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr.trim().split('\n')).toEqual([
        "petstore-load: --timeout: '10' is not a duration (examples: 250ms, 30s, 2m, 1h, 1d)",
      ]);
    }
  });

  it('a run does what was printed: the same plan, time scale, windows and timeout in its result', async () => {
    const out = workspace.fresh('run');
    const flags = [
      '--api-key',
      'free=free-demo-key',
      '--windows',
      '1',
      '--time-scale',
      '30',
      '--timeout',
      '3s',
    ];
    const shown = await cliInProcess(['capacity', ...flags, '--print-config']);
    expect(shown.code).toBe(0);
    const printed = JSON.parse(shown.stdout);
    const run = await runCli(['capacity', ...flags, '--quiet', '--out', out], 50_000);
    // The verdict is the probe's business (a loaded machine may fail a window); the configuration is this test's.
    expect([0, 1]).toContain(run.code);
    const result = readJson(join(out, 'result.json')) as RunResult;
    const config = result.config as unknown as Record<string, unknown> & {
      workload: Record<string, unknown>;
    };
    expect(config.workload.plans).toEqual(Object.keys(printed.plans));
    expect(config.workload.windows).toBe(printed.windows);
    expect(config.timeScale).toBe(printed.plans.free.timeScale);
    expect(config.timeoutMs).toBe(printed.timeoutMs);
    expect(config.windows).toEqual(printed.plans.free.scaledWindows);
    // And what was printed is what the flags asked for.
    expect(printed.plans.free.scaledWindows).toEqual(scalePlan(getPlan(DEFAULT_PLANS, 'free'), 30).windows);
    expect(printed.timeoutMs).toBe(3000);
    // The test's timeout covers the run's own bound (50 s), past the default 30 s.
  }, 60_000);
});
