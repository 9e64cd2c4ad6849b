import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tenantMix from '../../scenarios/tenant-mix.ts';
import { keysPerPlan, mintedKey, mintedKeyTable } from '../../src/api/tenants.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { killAllClis, readJson, readTree, runCli } from '../helpers/integration-cli.ts';

/**
 * `run tenant-mix` as users run it, twice side by side: on the embedded server, where every key is
 * minted for the run and isolation holds; and against a server whose limiter lets one bucket be
 * spent by every key (the sharedBucket fault), with the keys given in a --tenants file, where the
 * abusive group's traffic costs the compliant tenants 429s and the verdict must fail. Side by side,
 * both runs see the same neighbour, so the latency comparison inside each stays fair.
 */

const RUN_TIMEOUT_MS = 120_000;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tenant-mix-'));
});
afterAll(() => {
  killAllClis();
  rmSync(dir, { recursive: true, force: true });
});

function resultIn(out: string): RunResult {
  const sub = readdirSync(out, { recursive: true }).find((f) => String(f).endsWith('result.json'));
  return readJson(join(out, String(sub))) as RunResult;
}

/**
 * How many Free keys' worth the shared bucket holds: the compliant Free tenants' traffic with some
 * 15% to spare (they use a share of their quotas), which the abusive group's then overflows.
 */
function freeBucketKeys(): number {
  let keysWorth = 0;
  for (const g of tenantMix.tenants ?? [])
    if (!g.name && g.plan === 'free') keysWorth += g.keys * (Number.parseFloat(String(g.rate)) / 100);
  return Math.ceil(keysWorth * 1.15);
}

describe('run tenant-mix', () => {
  it(
    'holds isolation on the embedded server, and the verdict fails when one bucket is shared',
    async () => {
      const seed = 'tenant-mix-test-seed';
      const specs = tenantMix.tenants ?? [];
      const table = mintedKeyTable(seed, keysPerPlan(specs));
      const keys = Object.keys(table);
      expect(keys.length).toBeGreaterThanOrEqual(100);
      // The bucket every key shares carries the compliant tenants with 10% to spare, not the abusive group too.
      const server = await startServer({
        keys: table,
        timeScale: 10,
        faults: { sharedBucket: freeBucketKeys() },
      });
      const file = join(dir, 'tenants.csv');
      const used: Record<string, number> = {};
      const rows = specs.flatMap((g) =>
        Array.from({ length: g.keys }, () => {
          const n = (used[g.plan] ?? 0) + 1;
          used[g.plan] = n;
          return `${g.plan},${mintedKey(seed, g.plan, n)},${g.name ?? ''}`;
        }),
      );
      writeFileSync(file, `plan,key,name\n${rows.join('\n')}\n`);
      try {
        const embeddedOut = join(dir, 'embedded');
        const sharedOut = join(dir, 'shared');
        const [embedded, shared] = await Promise.all([
          // 14 s of the scenario's 20: the abusive group's 4 s after its start at 10 s are enough for
          // the verdict, and the suite's time is short.
          runCli(['run', 'tenant-mix', '--duration', '14s', '--quiet', '--out', embeddedOut], RUN_TIMEOUT_MS),
          runCli(
            [
              'run',
              'tenant-mix',
              '--duration',
              '14s',
              '--base-url',
              server.url,
              '--tenants',
              file,
              '--time-scale',
              '10',
              '--out',
              sharedOut,
            ],
            RUN_TIMEOUT_MS,
          ),
        ]);

        expect(embedded.code, `stdout: ${embedded.stdout}\nstderr: ${embedded.stderr}`).toBe(0);
        const good = resultIn(embeddedOut);
        expect(resultProblem(good)).toBeUndefined();
        expect(Object.keys(good.byPlan ?? {}).sort()).toEqual(['business', 'free', 'pro']);
        const tiers = Object.values(good.byPlan ?? {});
        expect(tiers.reduce((n, t) => n + t.keys, 0)).toBe(100);
        for (const t of tiers) {
          expect(t.rateLimited).toBe(0);
          expect(t.violations).toBe(0);
          expect(t.keysSeen).toBe(t.keys);
        }
        expect(good.compliance.violations).toBe(0);
        const abusive = good.byTenantGroup?.abusive;
        expect(abusive?.rateLimited ?? 0).toBeGreaterThan(0);
        expect(good.isolation?.passed, good.isolation?.detail).toBe(true);

        // The failing verdict: compliant tenants refused once the abusive group spends the shared bucket.
        const bad = resultIn(sharedOut);
        expect(resultProblem(bad)).toBeUndefined();
        expect(bad.isolation?.passed, bad.isolation?.detail).toBe(false);
        expect(bad.isolation?.detail).toMatch(/429/);
        expect(shared.code).toBe(1);

        // No key in any output: 105 minted keys, given in a file.
        for (const out of [shared, embedded])
          for (const text of [out.stdout, out.stderr])
            for (const key of keys) expect(text).not.toContain(key);
        for (const f of [...readTree(sharedOut), ...readTree(embeddedOut)])
          for (const key of keys) expect(f.content.includes(key), f.path).toBe(false);
        // The embedded run's keys were minted from a seed of its own: none of their shape shows anywhere.
        const minted = /(free|pro|business)-tenant-[A-Za-z0-9_-]{22}/;
        expect(embedded.stdout).not.toMatch(minted);
        for (const f of readTree(embeddedOut)) expect(f.content, f.path).not.toMatch(minted);
      } finally {
        await server.close();
      }
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
