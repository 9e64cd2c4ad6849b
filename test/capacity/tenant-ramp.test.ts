import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { mintedKey } from '../../src/api/tenants.ts';
import { formatTenantCapacity } from '../../src/capacity/report/table.ts';
import {
  runTenantCapacity,
  type TenantCapacityResult,
} from '../../src/capacity/tenants/run-tenant-capacity.ts';
import {
  keysNeeded,
  largestWithKeys,
  parseTenantMix,
  rampTenants,
  tenantCapacityOf,
  tenantCounts,
  tenantSentence,
  thresholdText,
} from '../../src/capacity/tenants/tenant-ramp.ts';
import { judgeStep } from '../../src/capacity/tenants/tenant-step.ts';
import {
  evaluateTenantCapacityThreshold,
  parseTenantCapacityThreshold,
} from '../../src/capacity/tenants/tenant-thresholds.ts';
import { chartData } from '../../src/report/chart-data.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import type { TenantStep } from '../../src/result/capacity-types.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';

const OPS = new Set(['listPets', 'getPetById']);
const CHROMIUM = '/usr/bin/chromium';
const P99_300 = parseThreshold('p99<300ms', 'cli', OPS);

describe('the tenant mix of a step', () => {
  it('parses a plan or fixed proportions, and refuses what is not one', () => {
    expect(parseTenantMix('pro', DEFAULT_PLANS)).toEqual({ pro: 1 });
    expect(parseTenantMix('free=4, pro=1', DEFAULT_PLANS)).toEqual({ free: 4, pro: 1 });
    expect(() => parseTenantMix('gold', DEFAULT_PLANS)).toThrow(/plan 'gold' is not in the plan table/);
    expect(() => parseTenantMix('free=0', DEFAULT_PLANS)).toThrow(/a proportion is a number above 0/);
    expect(() => parseTenantMix('free=,pro', DEFAULT_PLANS)).toThrow(/a proportion/);
    expect(() => parseTenantMix('pro,pro=2', DEFAULT_PLANS)).toThrow(/named twice/);
    expect(() => parseTenantMix(' , ', DEFAULT_PLANS)).toThrow(/name a plan/);
  });

  it('splits n tenants by the proportions, adding up to n, one of each at least', () => {
    expect(tenantCounts({ pro: 1 }, 7)).toEqual({ pro: 7 });
    expect(tenantCounts({ free: 4, pro: 1 }, 10)).toEqual({ free: 8, pro: 2 });
    expect(tenantCounts({ free: 4, pro: 1 }, 7)).toEqual({ free: 6, pro: 1 });
    expect(tenantCounts({ free: 100, pro: 1 }, 2)).toEqual({ free: 1, pro: 1 });
    const mix = { free: 5, pro: 3, business: 1 };
    const needed = keysNeeded(mix, 500);
    for (let n = 3; n <= 500; n++) {
      const counts = tenantCounts(mix, n);
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(n);
      for (const [plan, c] of Object.entries(counts)) {
        expect(c).toBeGreaterThanOrEqual(1);
        expect(c).toBeLessThanOrEqual(needed[plan] as number);
      }
    }
  });

  it("stops a file's ramp where a plan runs out of keys", () => {
    expect(largestWithKeys({ free: 4, pro: 1 }, { free: 40, pro: 3 }, 1000)).toBe(17);
    expect(largestWithKeys({ pro: 1 }, { pro: 50 }, 20)).toBe(20);
    expect(largestWithKeys({ free: 1, pro: 1 }, { free: 5 }, 20)).toBe(0);
  });
});

/** A fake target that holds up to `capacity` tenants: the ramp's arithmetic alone. */
async function rampWith(capacity: number, options: Parameters<typeof rampTenants>[0]) {
  const asked: number[] = [];
  const outcome = await rampTenants(options, async (n) => {
    asked.push(n);
    return { held: n <= capacity };
  });
  return { asked, held: outcome.held?.tenants, broke: outcome.broke?.tenants, outcome };
}

describe('the ramp: doubling, then bisection', () => {
  it('doubles until a step breaks, then bisects at most three times', async () => {
    const r = await rampWith(300, { start: 1, max: 10_000 });
    expect(r.asked).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 384, 320, 288]);
    expect(r.held).toBe(288);
    expect(r.broke).toBe(320);
  });

  it('ends at the maximum when nothing breaks, the maximum itself a step', async () => {
    const r = await rampWith(Number.POSITIVE_INFINITY, { start: 3, max: 20 });
    expect(r.asked).toEqual([3, 6, 12, 20]);
    expect(r.held).toBe(20);
    expect(r.broke).toBeUndefined();
  });

  it('bisects below a first step that broke, never below the least', async () => {
    expect((await rampWith(5, { start: 8, max: 100 })).asked).toEqual([8, 4, 6, 5]);
    const none = await rampWith(0, { start: 1, max: 100 });
    expect(none.asked).toEqual([1]);
    expect(none.held).toBeUndefined();
    expect(none.broke).toBe(1);
    // A mix of two plans has two tenants at least.
    expect((await rampWith(1, { start: 1, max: 100, least: 2 })).asked).toEqual([2]);
  });

  it('stops between steps when asked to (Ctrl-C), keeping what it measured', async () => {
    let steps = 0;
    const outcome = await rampTenants({ start: 1, max: 1000, stopped: () => steps >= 3 }, async () => {
      steps++;
      return { held: true };
    });
    expect(outcome.steps.map((s) => s.tenants)).toEqual([1, 2, 4]);
    expect(outcome.held?.tenants).toBe(4);
    // A step cut short is no verdict: neither kept nor bisected around.
    const cut = await rampTenants({ start: 1, max: 1000 }, async (n) => ({
      held: n < 8,
      interrupted: n >= 8,
    }));
    expect(cut.steps.map((s) => s.tenants)).toEqual([1, 2, 4]);
    expect(cut.broke).toBeUndefined();
  });
});

const latency = (p50: number, p99: number) => ({
  count: 100,
  p50,
  p75: p50,
  p90: p99,
  p95: p99,
  p99,
  'p99.9': p99,
  min: p50 / 2,
  max: p99,
  mean: p50,
  stdev: 1,
});

/** The figures judgeStep reads, as a step's result carries them. */
function stepResult(
  o: {
    p99?: number;
    serviceP99?: number;
    statuses?: Record<string, number>;
    transport?: Record<string, number>;
    rateLimited?: number;
    checks?: { id: string; failures: number }[];
    dropped?: number;
  } = {},
): RunResult {
  return {
    meta: { durationSeconds: 5 },
    overall: {
      requests: 100,
      rate: 20,
      statuses: o.statuses ?? { 200: 100 },
      transportErrors: o.transport ?? {},
      rateLimited: o.rateLimited ?? 0,
      response: latency(1, o.p99 ?? 10),
      service: latency(1, o.serviceP99 ?? o.p99 ?? 10),
      histograms: { service: '', response: '' },
    },
    checks: (o.checks ?? []).map((c) => ({ ...c, rule: '', source: '', passes: 10, samples: [] })),
    workload: { iterations: 100, droppedIterations: o.dropped ?? 0, failedIterations: 0, flows: {} },
  } as unknown as RunResult;
}

const judge = (result: RunResult, extra: { loopDelayP99Ms?: number; cpuShare?: number } = {}) =>
  judgeStep(result, {
    perPlan: { pro: 4 },
    offeredRate: 20,
    thresholds: [P99_300],
    loopDelayP99Ms: extra.loopDelayP99Ms ?? 1,
    cpuShare: extra.cpuShare ?? 0.3,
  });

describe('a step breaks, and says whose limit it met', () => {
  it('holds with its thresholds kept, no error, no 429, the schedule kept', () => {
    const step = judge(stepResult());
    expect(step).toMatchObject({ tenants: 4, held: true, reasons: [], p99Ms: 10 });
    expect(step.cause).toBeUndefined();
    expect(step.thresholds).toEqual([{ expression: 'p99<300ms', actual: 10, passed: true }]);
  });

  it('breaks on a threshold, a 5xx, a transport error, or the limiter (a 429 or a header check)', () => {
    expect(judge(stepResult({ p99: 400 }))).toMatchObject({ held: false, cause: 'threshold' });
    expect(judge(stepResult({ statuses: { 200: 99, 503: 1 } }))).toMatchObject({ cause: 'errors' });
    expect(judge(stepResult({ transport: { ECONNRESET: 2 } })).reasons[0]).toBe(
      '2 errors (5xx or transport)',
    );
    expect(judge(stepResult({ rateLimited: 3 })).reasons[0]).toMatch(/3 429s to tenants paced within/);
    const header = judge(stepResult({ checks: [{ id: 'ratelimit-remaining-never-rises', failures: 2 }] }));
    expect(header).toMatchObject({ cause: 'limiter', limiterCheckFailures: 2 });
    // The dialect's agreement with a contract is compliance, not capacity.
    expect(
      judge(stepResult({ checks: [{ id: 'ratelimit-dialect-matches-contract', failures: 9 }] })).held,
    ).toBe(true);
    // The target's own words come first.
    expect(judge(stepResult({ p99: 900, statuses: { 200: 99, 500: 1 } })).cause).toBe('errors');
  });

  it('blames the generator, not the target, for late timers, its own backlog or a busy core', () => {
    expect(judge(stepResult(), { loopDelayP99Ms: 150 })).toMatchObject({ held: false, cause: 'generator' });
    const backlog = judge(stepResult({ dropped: 5, serviceP99: 3 }));
    expect(backlog.cause).toBe('generator');
    expect(backlog.reasons[0]).toMatch(/dropped 4\.76% of its iterations with the target answering in 3 ms/);
    // Iterations that piled up behind slow answers are the target's latency.
    expect(judge(stepResult({ dropped: 5, p99: 3000 })).cause).toBe('threshold');
    expect(judge(stepResult({ p99: 400 }), { cpuShare: 0.99 })).toMatchObject({ cause: 'generator' });
    expect(judge(stepResult(), { cpuShare: 0.99 }).held).toBe(true);
  });
});

function step(tenants: number, held: boolean, extra: Partial<TenantStep> = {}): TenantStep {
  return {
    tenants,
    perPlan: { pro: tenants },
    durationMs: 5000,
    requests: tenants * 25,
    rate: tenants * 5,
    offeredRate: tenants * 5,
    p50Ms: 1,
    p99Ms: held ? 20 : 420,
    serviceP99Ms: held ? 18 : 410,
    errors: 0,
    rateLimited: 0,
    limiterCheckFailures: 0,
    iterations: tenants * 25,
    droppedIterations: 0,
    loopDelayP99Ms: 2,
    generatorCpu: 0.5,
    thresholds: [],
    held,
    reasons: held ? [] : ['p99 was 420 ms, wanted < 300 ms'],
    ...(held ? {} : { cause: 'threshold' as const }),
    ...extra,
  };
}

const SETTINGS = {
  mix: { pro: 1 },
  thresholds: ['p99<300ms'],
  stepMs: 5000,
  restMs: 500,
  timeScale: 1,
  start: 1,
  maxTenants: 10_000,
  warmup: null,
};

describe('the headline', () => {
  it('states the largest number that held, and what broke above it', () => {
    const steps = [
      step(1024, true),
      step(2048, false),
      step(1536, true),
      step(1792, true),
      step(1920, false),
    ];
    const c = tenantCapacityOf(
      {
        steps: steps.map((s) => ({ tenants: s.tenants, step: s })),
        held: { tenants: 1792, step: steps[3] as TenantStep },
        broke: { tenants: 1920, step: steps[4] as TenantStep },
      },
      SETTINGS,
      'the reference server',
    );
    expect(c).toMatchObject({ held: 1792, brokeAt: 1920, cause: 'threshold', boundBy: 'target' });
    expect(c.sentence).toBe(
      'the reference server held 1,792 Pro tenants at their quota with p99 < 300 ms; at 1,920: p99 was 420 ms, wanted < 300 ms',
    );
    const table = formatTenantCapacity(c);
    expect(table.split('\n')[0]).toBe(c.sentence);
    // The curve in order of tenants, whatever order the bisection ran them in.
    expect(table.match(/^(\d[\d,]*) /gm)).toEqual(['1,024 ', '1,536 ', '1,792 ', '1,920 ', '2,048 ']);
  });

  it('names the generator as the bound when it was, a mix by its plans, and a ramp that never broke', () => {
    const gen = step(4096, false, {
      cause: 'generator',
      reasons: ["the generator's timers ran 140 ms late (p99)"],
    });
    const base = { ...SETTINGS, reasons: gen.reasons, steps: [step(2048, true), gen] };
    expect(
      tenantSentence(
        { ...base, held: 2048, heldPerPlan: { pro: 2048 }, brokeAt: 4096, cause: 'generator' },
        'X',
      ),
    ).toBe(
      "the generator could not drive more than 2,048 Pro tenants at their quota (at 4,096: the generator's timers ran 140 ms late (p99)); up to there X held with p99 < 300 ms",
    );
    expect(
      tenantSentence(
        {
          ...base,
          mix: { free: 4, pro: 1 },
          maxTenants: 10,
          held: 10,
          heldPerPlan: { free: 8, pro: 2 },
          brokeAt: null,
          cause: null,
        },
        'X',
      ),
    ).toBe(
      "X held 10 tenants (8 Free, 2 Pro) at their quota with p99 < 300 ms: every step held, up to the ramp's maximum (--max-tenants 10)",
    );
    // Ctrl-C before any step broke or the maximum: no bound claimed.
    expect(
      tenantSentence(
        { ...base, held: 2, heldPerPlan: { pro: 2 }, brokeAt: null, cause: null, reasons: [] },
        'X',
      ),
    ).toBe(
      "X held 2 Pro tenants at their quota with p99 < 300 ms; interrupted before a step broke or the ramp's maximum (10,000)",
    );
    expect(
      tenantSentence(
        {
          ...base,
          steps: [step(1, false)],
          held: null,
          heldPerPlan: null,
          brokeAt: 1,
          cause: 'limiter',
          reasons: ['2 429s'],
          timeScale: 10,
        },
        'X',
      ),
    ).toBe('X did not hold 1 Pro tenant at its quota (time scale 10) with p99 < 300 ms: 2 429s');
    expect(thresholdText(['p99<300ms', 'errors<1%', 'rps >= 50/s'])).toBe(
      'p99 < 300 ms and errors < 1% and rps >= 50/s',
    );
  });

  it('judges capacity.tenants.held and broke_at', () => {
    const c = { held: 1792, brokeAt: 1920, maxTenants: 10_000 } as Parameters<
      typeof evaluateTenantCapacityThreshold
    >[1];
    const held = parseTenantCapacityThreshold('capacity.tenants.held>=1000');
    expect(evaluateTenantCapacityThreshold(held, c)).toMatchObject({ passed: true, actual: 1792 });
    const over = parseTenantCapacityThreshold('capacity.tenants.held >= 2000');
    expect(evaluateTenantCapacityThreshold(over, c).detail).toBe(
      'capacity tenants held was 1792, wanted >= 2000',
    );
    const never = { ...c, held: 10_000, brokeAt: null };
    expect(
      evaluateTenantCapacityThreshold(parseTenantCapacityThreshold('capacity.tenants.broke_at>500'), never)
        .passed,
    ).toBe(true);
    expect(() => parseTenantCapacityThreshold('p99<300ms')).toThrow(/--tenant-threshold/);
    expect(() => parseTenantCapacityThreshold('capacity.tenants.rps>1')).toThrow(/unknown metric 'rps'/);
  });
});

/**
 * The acceptance: the number moves when the server is slower. Two reference servers side by side,
 * one adding 140 ms to every answer, each ramped with Pro tenants at time scale 10 (50 requests a
 * second each, up to 128 of them: 6,400 a second) against p99 < 150 ms. The slow one has 10 ms of
 * slack, the other 150: idle, the slow one breaks where this process's own delays pass 10 ms (well
 * below 6,400 a second), the other holds far higher; on a loaded machine the slow one breaks at
 * once while the other still holds a few tenants. Run together, the busier normal ramp only slows
 * the slow one further, which is the direction asserted.
 */
describe('capacity --tenants against two reference servers, one slower', () => {
  const SEED = 'tenant-ramp-test';
  const MAX = 128;
  let normal: RunningServer;
  let slow: RunningServer;
  let fast: TenantCapacityResult;
  let slowed: TenantCapacityResult;
  let elapsedMs = 0;

  beforeAll(async () => {
    const options = { timeScale: 10, tenantKeys: { pro: MAX + 1 }, tenantSeed: SEED };
    [normal, slow] = await Promise.all([
      startServer(options),
      startServer({ ...options, faults: { latencyMs: 140 } }),
    ]);
    const spec = await loadSpec();
    const ramp = (server: RunningServer) =>
      runTenantCapacity({
        mix: { pro: 1 },
        plans: DEFAULT_PLANS,
        timeScale: 10,
        keyFor: (plan, n) => mintedKey(SEED, plan, n),
        start: 1,
        maxTenants: MAX,
        stepMs: 1000,
        thresholds: [parseThreshold('p99<150ms', 'cli', OPS)],
        baseUrl: server.url,
        target: server.url,
        embeddedTarget: true,
        targetName: 'the reference server',
        operations: spec.operations,
        spec: 'built in',
      });
    const started = Date.now();
    [fast, slowed] = await Promise.all([ramp(normal), ramp(slow)]);
    elapsedMs = Date.now() - started;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([normal?.close(), slow?.close()]);
  });

  it('finds a number for each, smaller for the slower server, within seconds', () => {
    const a = fast.tenantCapacity;
    const b = slowed.tenantCapacity;
    const show = (c: typeof a) =>
      c.steps
        .map(
          (s) =>
            `${s.tenants}:${s.held ? 'ok' : s.cause}:${s.p99Ms}:${s.rate}/${s.offeredRate}:${s.generatorCpu}`,
        )
        .join(' ');
    const context = `normal ${show(a)} | slow ${show(b)}`;
    expect(a.held, context).toBeGreaterThanOrEqual(2);
    expect(b.held ?? 0, context).toBeLessThan(a.held as number);
    expect(elapsedMs).toBeLessThan(35_000);
    // Every step at full quota, paced: the reference limiter never refused a tenant.
    for (const s of [...a.steps, ...b.steps]) expect(s.rateLimited, context).toBe(0);
    expect(a.sentence).toMatch(
      /^the (reference server held \d+ Pro tenants? at (its|their) quota \(time scale 10\) with p99 < 150 ms|generator could not drive more than)/,
    );
  });

  it('writes a valid result whose report draws the curve', () => {
    expect(resultProblem(JSON.parse(JSON.stringify(fast)))).toBeUndefined();
    expect(fast.meta.scenario).toBe('capacity-tenants');
    const chart = chartData(fast).find((c) => c.kind === 'tenant-ramp');
    expect(chart && 'tenants' in chart ? chart.tenants : []).toEqual(
      [...fast.tenantCapacity.steps.map((s) => s.tenants)].sort((x, y) => x - y),
    );
    const page = renderHtmlReport(fast);
    expect(page).toContain('<section id="tenant-capacity">');
    expect(page).toContain('data-chart="tenant-ramp"');
    expect(page).toContain(`data-tenant-capacity="${fast.tenantCapacity.held}"`);
  });

  // As test/report/browser.test.ts: without Chromium it is skipped locally, and CI must have it.
  it.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('the curve is drawn in a browser', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'petstore-load-ramp-report-')), 'report.html');
    writeFileSync(path, renderHtmlReport(fast));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
      const drawn = await page.$eval('[data-chart="tenant-ramp"]', (el) => {
        let p99 = 0;
        for (const canvas of el.querySelectorAll('canvas')) {
          const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
          // The p99 curve's orange (#d97706).
          for (let i = 0; i < data.length; i += 4)
            if (
              Math.abs((data[i] as number) - 217) < 40 &&
              Math.abs((data[i + 1] as number) - 119) < 40 &&
              (data[i + 2] as number) < 60 &&
              (data[i + 3] as number) > 128
            )
              p99++;
        }
        return { points: el.getAttribute('data-points'), p99 };
      });
      expect(errors).toEqual([]);
      expect(drawn.points).toBe(String(fast.tenantCapacity.steps.length));
      expect(drawn.p99).toBeGreaterThan(50);
    } finally {
      await browser.close();
      rmSync(dirname(path), { recursive: true, force: true });
    }
  });
});
