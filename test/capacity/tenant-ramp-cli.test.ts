import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintedKey } from '../../src/api/tenants.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { killAllClis, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `capacity --tenants` as users run it: a short ramp on the embedded server and on a target of one's
 * own with a file's keys. Every step's verdict is p99 < 300 ms, a wall-clock reading, so the file
 * runs in TIMING_LIGHT (a few tenants far below the machine's limit: mostly waiting); the test that
 * reads latency under real load (tenant-ramp.test.ts) runs in TIMING.
 */

describe('petstore-load capacity --tenants pro (embedded server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-load-tenant-ramp-'));
  afterAll(() => {
    killAllClis();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds a number, prints its headline and steps, and writes the curve into the report', async () => {
    const out = join(dir, 'run');
    const args = ['--max-tenants', '4', '--step-duration', '1s', '--threshold', 'capacity.tenants.held>=1'];
    const outcome = await runCli(['capacity', '--tenants', 'pro', ...args, '--out', out], 30_000);
    const context = `${outcome.stdout}\n${outcome.stderr}`;
    expect(outcome.code, context).toBe(0);
    expect(outcome.stdout).toContain(
      "the reference server held 4 Pro tenants at their quota with p99 < 300 ms: every step held, up to the ramp's maximum (--max-tenants 4)",
    );
    expect(outcome.stdout).toMatch(/^tenants +req\/s +quota req\/s/m);
    expect(outcome.stdout).toContain('threshold capacity.tenants.held>=1: pass');
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    expect(result.tenantCapacity).toMatchObject({ mix: { pro: 1 }, held: 4, brokeAt: null, timeScale: 1 });
    expect(result.tenantCapacity?.steps.map((s) => s.tenants)).toEqual([1, 2, 4]);
    const page = readFileSync(join(out, 'report.html'), 'utf8');
    expect(page).toContain('data-chart="tenant-ramp"');
    expect(page).toContain('held 4 Pro tenants');
  });

  it('refuses a plan it does not know, and keys of a file without a target of its own', async () => {
    const unknown = await cliInProcess(['capacity', '--tenants', 'gold']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--tenants: plan 'gold' is not in the plan table");
    const file = await cliInProcess(['capacity', '--tenants', 'pro', '--tenants-file', 'keys.csv']);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('--tenants-file names keys of your own target: give --base-url too');
  });

  it("ramps a target of one's own with a file's keys, no further than they go, never writing one", async () => {
    const server = await startServer({ timeScale: 10, tenantKeys: { pro: 3 }, tenantSeed: 'own-target' });
    try {
      const keys = [1, 2, 3].map((n) => mintedKey('own-target', 'pro', n));
      const csv = join(dir, 'keys.csv');
      writeFileSync(csv, `plan,key\n${keys.map((k) => `pro,${k}`).join('\n')}\n`);
      const out = join(dir, 'own');
      const args = ['--base-url', server.url, '--tenants-file', csv, '--time-scale', '10'];
      const outcome = await runCli(
        ['capacity', '--tenants', 'pro', ...args, '--step-duration', '1s', '--out', out],
        30_000,
      );
      const context = `${outcome.stdout}\n${outcome.stderr}`;
      expect(outcome.code, context).toBe(0);
      expect(outcome.stderr).toContain('its keys allow 3 tenants of the mix: the ramp stops there');
      const result = readJson(join(out, 'result.json')) as RunResult;
      expect(result.tenantCapacity).toMatchObject({ held: 3, maxTenants: 3, boundBy: 'max' });
      expect(result.tenantCapacity?.steps.map((s) => s.tenants)).toEqual([1, 2, 3]);
      const written = [
        context,
        readFileSync(join(out, 'result.json'), 'utf8'),
        readFileSync(join(out, 'report.html'), 'utf8'),
      ];
      for (const key of keys) for (const text of written) expect(text.includes(key)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
