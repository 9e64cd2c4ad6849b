import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, getPlan, planRate, scalePlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import {
  buildTenantMix,
  mintedKey,
  type TenantGroupSpec,
  validateTenantSpecs,
} from '../../src/api/tenants.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import type { Workload } from '../../src/scenario/define.ts';
import { executeScenario, type LiveRun, type RunTick } from '../../src/scenario/execute.ts';
import { tenantLoads } from '../../src/scenario/tenant-load.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';

/**
 * The engine's side of a tenant mix, in process against the reference server: which key each
 * arrival or virtual user sends as, when a later group starts, and that nothing of a key is recorded.
 */

const SEED = 'tenant-engine-test';
const SCALE = 10;
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ timeScale: SCALE, tenantKeys: { free: 4, pro: 2 }, tenantSeed: SEED });
});
afterAll(async () => {
  await server.close();
});

async function runMix(workload: Workload, groups: TenantGroupSpec[], url = server.url) {
  const { operations } = await loadSpec();
  const windowsOf = (plan: string) => scalePlan(getPlan(DEFAULT_PLANS, plan), SCALE).windows;
  const mix = buildTenantMix(validateTenantSpecs(groups, DEFAULT_PLANS), windowsOf, (plan, n) =>
    mintedKey(SEED, plan, n),
  );
  const resolved = resolveWorkload(workload, planRate(windowsOf('free')));
  const attempts: AttemptRecord[] = [];
  const ticks: RunTick[] = [];
  let live: LiveRun | undefined;
  let startedAt = 0;
  const result = await executeScenario({
    scenario: {
      name: 'tenant-engine',
      workload,
      flows: [{ name: 'browse', run: async (api) => void (await api.listCategories({ limit: 5 })) }],
    },
    workload: resolved,
    baseUrl: url,
    target: url,
    embeddedTarget: true,
    apiKey: undefined,
    operations,
    plan: 'free',
    windows: windowsOf('free'),
    timeScale: SCALE,
    enforce: true,
    spec: 'built in',
    tenants: { mix, loads: tenantLoads(mix, workload, {}, resolved.kind) },
    tap: (a) => attempts.push(a),
    onTick: (tick) => ticks.push(tick),
    onLive: (run) => {
      live = run;
    },
    onWorkload: (running) => {
      if (running) startedAt = performance.timeOrigin + performance.now();
    },
  });
  return { result, attempts, ticks, live, startedAt, keys: mix.tenants.map((t) => t.key) };
}

describe('a tenant mix in the engine', () => {
  it("hands a group's arrivals to its keys in turn, starts a later group on time, and records no key", async () => {
    const { result, attempts, startedAt, keys } = await runMix(
      { executor: 'constant-arrival-rate', rate: 2, duration: '1500ms', maxInFlight: 2 },
      [
        { plan: 'free', keys: 3 },
        { plan: 'pro', keys: 2, rate: 4, startTime: '700ms' },
      ],
    );
    const byLabel = new Map<string, AttemptRecord[]>();
    for (const a of attempts) byLabel.set(a.keyLabel, [...(byLabel.get(a.keyLabel) ?? []), a]);
    // 2 per second per Free key for 1.5 s: 8 or 9 arrivals in turn, 2 or 3 each; 4 per second per
    // Pro key for 0.8 s: 3 or 4 each.
    const free = ['free#1', 'free#2', 'free#3'].map((label) => byLabel.get(label)?.length ?? 0);
    expect(free.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(8);
    expect(Math.max(...free) - Math.min(...free)).toBeLessThanOrEqual(1);
    for (const label of ['pro#1', 'pro#2']) {
      const sent = byLabel.get(label) ?? [];
      expect(sent.length).toBeGreaterThanOrEqual(3);
      expect(sent.length).toBeLessThanOrEqual(4);
      // Due no earlier than the group's start.
      for (const a of sent) expect((a.scheduledAt ?? a.sentAt) - startedAt).toBeGreaterThanOrEqual(699);
      expect(sent.every((a) => a.tenant?.plan === 'pro' && a.tenant.label === label)).toBe(true);
    }
    // The server knew every key (none answered 401), and the result names none of them.
    expect(attempts.every((a) => a.status === 200)).toBe(true);
    const text = JSON.stringify(result);
    for (const key of keys) expect(text).not.toContain(key);
    expect(result.byPlan?.free?.keys).toBe(3);
    expect(result.byPlan?.pro?.admittedPerKey.reduce((a, b) => a + b, 0)).toBe(
      byLabel.get('pro#1')!.length + byLabel.get('pro#2')!.length,
    );
  });

  it("puts what the mix's keys learned of the limiter in the result: a GCRA that says nothing", async () => {
    // Its rate is 80% of the plan the mix paces to (time scale 8, not 10): the client keeps every gap
    // 1% over the plan's interval, which a GCRA at the plan's own rate never refuses, so that one
    // teaches nothing; this one refuses the plan's pace, and the lanes learn its gap.
    const gcra = await startServer({
      timeScale: SCALE * 0.8,
      tenantKeys: { free: 2 },
      tenantSeed: SEED,
      limiter: 'gcra',
      headerDialect: 'none',
    });
    try {
      const { result, ticks, live } = await runMix(
        { executor: 'constant-vus', vus: 4, duration: '2500ms' },
        [{ plan: 'free', keys: 2 }],
        gcra.url,
      );
      // Live metrics and the status line count the mix's keys by what holds each back.
      const total = (keys: Record<string, number> | undefined) =>
        Object.values(keys ?? {}).reduce((a, b) => a + b, 0);
      expect(total(live?.keys?.())).toBe(2);
      // A 2.5 s run ticks each second: a loop over no ticks would prove nothing.
      expect(ticks.length).toBeGreaterThan(0);
      for (const tick of ticks) expect(total(tick.keys?.())).toBe(2);
      // The run's own key sent nothing: only the lanes could have learned it.
      expect(result.compliance.limiter).toMatchObject({ model: 'gcra', given: false });
      // At least the server's interval (125 ms), learned from its refusals.
      expect(result.compliance.limiter?.gapMs).toBeGreaterThan(120);
      expect(result.compliance.violations).toBe(0);
    } finally {
      await gcra.close();
    }
  });

  it("gives each virtual user one tenant's key, in the mix's order", async () => {
    const { attempts } = await runMix(
      { executor: 'constant-vus', vus: 4, duration: '600ms', thinkTime: '100ms' },
      [
        { plan: 'free', keys: 2 },
        { plan: 'pro', keys: 2 },
      ],
    );
    const labels = new Set(attempts.map((a) => a.keyLabel));
    expect([...labels].sort()).toEqual(['free#1', 'free#2', 'pro#1', 'pro#2']);
    for (const a of attempts) expect(a.status).toBe(200);
  });
});
