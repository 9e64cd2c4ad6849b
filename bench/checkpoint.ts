/**
 * bench:checkpoint: how long `run`'s checkpoint holds the event loop (the result built, serialised
 * and written, synchronously), at realistic sizes: one key, and a tenant mix of BENCH_KEYS keys, each
 * at BENCH_RATE requests a second in all over four operations for BENCH_DURATION seconds, against
 * the reference server in its own process with a quota that never binds. The checkpoints are the
 * real ones (src/cli/checkpoint.ts, every BENCH_INTERVAL seconds into a temporary directory); the
 * event loop's longest delay over the run is printed beside them, since a stall is what a
 * checkpoint costs the requests due while it runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan } from '../src/api/plans.ts';
import { loadSpec } from '../src/api/spec.ts';
import { buildTenantMix, mintedKey, TENANT_SEED_ENV } from '../src/api/tenants.ts';
import { Checkpoints } from '../src/cli/checkpoint.ts';
import { spawnServer } from '../src/cli/embedded-server.ts';
import { CHECKPOINT_FILE } from '../src/config/checkpoint.ts';
import { writeFileAtomic } from '../src/io/atomic-write.ts';
import type { RunResult } from '../src/result/types.ts';
import type { Scenario } from '../src/scenario/define.ts';
import { executeScenario } from '../src/scenario/execute.ts';
import { tenantLoads } from '../src/scenario/tenant-load.ts';
import { resolveWorkload } from '../src/scenario/workload.ts';
import { stopOnExit } from './harness.ts';
import { median, writeBenchReport } from './report.ts';

const durationS = Number(process.env.BENCH_DURATION ?? 60);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const intervalS = Number(process.env.BENCH_INTERVAL ?? 10);
const tenantKeys = Number(process.env.BENCH_KEYS ?? 1000);
/** A quota of 5,000 a second per key: never met at these rates. */
const PLANS = { bench: { windows: [{ name: 'second', limit: 5000, seconds: 1 }] } };

const seed = randomBytes(16).toString('hex');
const dir = mkdtempSync(join(tmpdir(), 'petstore-load-bench-checkpoint-'));
const plansFile = join(dir, 'plans.json');
writeFileAtomic(plansFile, JSON.stringify(PLANS));
const windows = getPlan(applyPlanOverrides(DEFAULT_PLANS, PLANS), 'bench').windows;
const { operations } = await loadSpec();
const server = await spawnServer(['--plans', plansFile, '--tenant-keys', `bench=${tenantKeys}`], {
  [TENANT_SEED_ENV]: seed,
});
const release = stopOnExit([server]);

/** One run of `keys` keys (1: a plain run on one key), its checkpoints measured. */
async function measure(keys: number) {
  const declared = {
    executor: 'constant-arrival-rate' as const,
    rate: keys === 1 ? rate : rate / keys,
    duration: `${durationS}s`,
    maxInFlight: 50,
  };
  const scenario: Scenario<undefined> = {
    name: 'bench-checkpoint',
    workload: declared,
    flows: [
      { name: 'list', run: async (api) => void (await api.listPets({ limit: 5 })) },
      { name: 'get', run: async (api) => void (await api.getPetById(1)) },
      { name: 'categories', run: async (api) => void (await api.listCategories({ limit: 5 })) },
      { name: 'inventory', run: async (api) => void (await api.getInventoryItem(1)) },
    ],
  };
  const mix =
    keys > 1
      ? buildTenantMix(
          [{ plan: 'bench', keys }],
          () => windows,
          (plan, n) => mintedKey(seed, plan, n),
        )
      : undefined;
  let take: (() => RunResult) | undefined;
  const out = join(dir, `keys-${keys}`);
  const checkpoints = new Checkpoints({
    intervalMs: intervalS * 1000,
    take: () => take?.(),
    dirOf: () => out,
  });
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const result = await executeScenario({
    scenario,
    workload: resolveWorkload(declared, rate, {}),
    baseUrl: server.url,
    target: server.url,
    embeddedTarget: true,
    apiKey: keys === 1 ? mintedKey(seed, 'bench', 1) : undefined,
    operations,
    plan: 'bench',
    windows,
    timeScale: 1,
    enforce: true,
    spec: 'built in',
    onSnapshot: (t) => {
      take = t;
    },
    onWorkload: (running) => (running ? checkpoints.start() : void checkpoints.stop()),
    ...(mix ? { tenants: { mix, loads: tenantLoads(mix, declared, {}, 'open') } } : {}),
  });
  delay.disable();
  await checkpoints.stop();
  return {
    keys,
    requests: result.overall.requests,
    checkpoints: checkpoints.costs.length,
    medianMs: median(checkpoints.costs),
    maxMs: Math.max(...checkpoints.costs),
    bytes: statSync(join(out, CHECKPOINT_FILE)).size,
    loopDelayMaxMs: delay.max / 1e6,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
  };
}

try {
  const figures = [];
  for (const keys of [1, tenantKeys]) {
    const f = await measure(keys);
    figures.push(f);
    console.log(
      `${keys === 1 ? '1 key' : `${keys} tenant keys`}, ${f.requests} requests in ${durationS} s: ${f.checkpoints} checkpoints of ${(f.bytes / 1024).toFixed(0)} KiB, ${f.medianMs.toFixed(1)} ms median, ${f.maxMs.toFixed(1)} ms max (event loop delay: p99 ${f.loopDelayP99Ms.toFixed(1)} ms, max ${f.loopDelayMaxMs.toFixed(1)} ms)`,
    );
  }
  console.log(`written to ${writeBenchReport('checkpoint', { durationS, rate, intervalS, figures })}`);
} finally {
  await release();
  rmSync(dir, { recursive: true, force: true });
}
