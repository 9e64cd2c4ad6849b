import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Operation } from '../../api/operations.ts';
import { planRate, type RateWindow } from '../../api/plans.ts';
import { buildTenantMix, type TenantGroupSpec } from '../../api/tenants.ts';
import { errorCount } from '../../record/errors.ts';
import { evaluateThreshold } from '../../report/threshold-evaluate.ts';
import type { Threshold } from '../../report/threshold-parse.ts';
import type { TenantBreakCause, TenantStep } from '../../result/capacity-types.ts';
import type { NetworkSeen, RunResult } from '../../result/types.ts';
import type { ConstantArrivalRate, Scenario } from '../../scenario/define.ts';
import { type ExecuteInput, executeScenario } from '../../scenario/execute.ts';
import { tenantLoads } from '../../scenario/tenant-load.ts';
import { resolveWorkload } from '../../scenario/workload.ts';
import type { NetworkOptions } from '../../transport/network.ts';

/** Iterations dropped beyond this share: the schedule was not kept. */
export const DROPPED_LIMIT = 0.01;
/** The generator's timers later than this (p99) during a step: its figures measure this machine. */
export const LOOP_DELAY_LIMIT_MS = 100;
/**
 * Below this service time p99, iterations that piled up were queued on our side (timers, pacing,
 * connections), not waiting on the target: a tenant is allowed 2 s of its traffic in flight.
 */
const BACKLOG_SERVICE_MS = 1000;
/** A generator this busy (share of one core) measures its own delays as much as the target's. */
export const CPU_LIMIT = 0.95;
const IN_FLIGHT_SECONDS = 2;
const LOOP_RESOLUTION_MS = 10;

/**
 * Checks whose failure under load means the limiter misbehaves: its headers (bounds, never rising,
 * the plan's limit, a stable reset) and its 429s (only when spent, with a Retry-After that holds).
 * The dialect's agreement with a contract is a compliance question, not one of load.
 */
export function isLimiterCheck(id: string): boolean {
  return /^(ratelimit|retry-after)-/.test(id) && id !== 'ratelimit-dialect-matches-contract';
}

export interface StepSettings {
  /** Tenants per plan. */
  perPlan: Record<string, number>;
  /** Requests per second their quotas allow together. */
  offeredRate: number;
  thresholds: readonly Threshold[];
  loopDelayP99Ms: number;
  /** The generator's CPU time over the workload's span (1: one core busy throughout). */
  cpuShare: number;
}

/**
 * A step's verdict from its result. Every tenant was paced within its quota, so any 429 is the
 * limiter's doing; a 5xx or a transport error is the target's; dropped iterations or late timers are
 * ours, unless the target's answers were what kept the iterations in flight. The first reason is the
 * one that decides: errors, then the limiter, then the generator, then the thresholds.
 */
export function judgeStep(result: RunResult, s: StepSettings): TenantStep {
  const o = result.overall;
  const thresholds = s.thresholds.map((t) => evaluateThreshold(t, result));
  const errors = errorCount(o);
  const limiterChecks = result.checks.filter((c) => isLimiterCheck(c.id) && c.failures > 0);
  const limiterCheckFailures = limiterChecks.reduce((sum, c) => sum + c.failures, 0);
  const w = result.workload;
  const due = w.iterations + w.droppedIterations;
  const droppedShare = due > 0 ? w.droppedIterations / due : 0;
  const lagging = s.loopDelayP99Ms > LOOP_DELAY_LIMIT_MS;
  const dropped = droppedShare > DROPPED_LIMIT;
  const ourBacklog = dropped && (lagging || o.service.p99 < BACKLOG_SERVICE_MS);
  const found: [TenantBreakCause, string][] = [];
  if (errors > 0) found.push(['errors', `${errors} error${errors === 1 ? '' : 's'} (5xx or transport)`]);
  if (o.rateLimited > 0) found.push(['limiter', `${o.rateLimited} 429s to tenants paced within their quota`]);
  for (const c of limiterChecks) found.push(['limiter', `check ${c.id} failed ${c.failures} times`]);
  if (lagging)
    found.push([
      'generator',
      `the generator's timers ran ${Math.round(s.loopDelayP99Ms)} ms late (p99): this machine is saturated`,
    ]);
  if (ourBacklog)
    found.push([
      'generator',
      `the generator dropped ${pct(droppedShare)} of its iterations with the target answering in ${round(o.service.p99)} ms (p99)`,
    ]);
  else if (dropped)
    found.push([
      'threshold',
      `answers so slow (service p99 ${round(o.service.p99)} ms) that ${pct(droppedShare)} of the iterations were dropped`,
    ]);
  for (const t of thresholds) if (!t.passed) found.push(['threshold', t.detail ?? t.expression]);
  // Latency measured by a generator that had no CPU left is partly its own: it cannot blame the target.
  if (found.length > 0 && found.every(([cause]) => cause === 'threshold') && s.cpuShare >= CPU_LIMIT)
    found.unshift([
      'generator',
      `the generator used ${Math.round(s.cpuShare * 100)}% of a core: the latency may be its own`,
    ]);
  const order: TenantBreakCause[] = ['errors', 'limiter', 'generator', 'threshold'];
  found.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
  const tenants = Object.values(s.perPlan).reduce((a, b) => a + b, 0);
  const step: TenantStep = {
    tenants,
    perPlan: s.perPlan,
    durationMs: Math.round(result.meta.durationSeconds * 1000),
    requests: o.requests,
    rate: round(o.rate),
    offeredRate: round(s.offeredRate),
    p50Ms: o.response.p50,
    p99Ms: o.response.p99,
    serviceP99Ms: o.service.p99,
    errors,
    rateLimited: o.rateLimited,
    limiterCheckFailures,
    iterations: w.iterations,
    droppedIterations: w.droppedIterations,
    loopDelayP99Ms: round(s.loopDelayP99Ms),
    generatorCpu: round(s.cpuShare),
    thresholds: thresholds.map((t) => ({ expression: t.expression, actual: t.actual, passed: t.passed })),
    held: found.length === 0,
    reasons: found.map(([, why]) => why),
  };
  if (found[0]) step.cause = found[0][0];
  return step;
}

const round = (x: number) => Math.round(x * 100) / 100;
const pct = (share: number) => `${round(share * 100)}%`;

export interface TenantStepInput {
  perPlan: Record<string, number>;
  /** The n-th key of a plan (1-based), minted or from a file. */
  keyFor(plan: string, n: number): string;
  /** A plan's windows as the target counts them (time-scaled). */
  windowsOf(plan: string): readonly RateWindow[];
  baseUrl: string;
  network?: NetworkOptions | undefined;
  target: string;
  embeddedTarget: boolean;
  operations: Operation[];
  spec: string;
  /** What the result records of TLS, HTTP/2 and the proxy (config.network). */
  networkSeen?: NetworkSeen | undefined;
  timeScale: number;
  durationMs: number;
  thresholds: readonly Threshold[];
  timeoutMs: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses: readonly number[];
  signal?: AbortSignal;
  /** Given when the step's run starts: its live recorder (see executeScenario). */
  onLive?: ExecuteInput<number[]>['onLive'];
}

/**
 * Read operations only, one request per iteration, so that an iteration rate of 100% is each key's
 * full request quota: a pet by id (of the first page, found in setup) or a page of pets.
 */
function readScenario(workload: ConstantArrivalRate): Scenario<number[]> {
  return {
    name: 'capacity-tenants',
    description: 'Tenants at their full quota, read operations',
    workload,
    setup: async (api) => {
      const page = await api.listPets({ limit: 20 });
      return page.ok && Array.isArray(page.body) ? page.body.map((p) => p.id) : [];
    },
    flows: [
      {
        name: 'get-pet',
        run: async (api, ctx) => {
          if (ctx.data.length > 0) await api.getPetById(ctx.pick(ctx.data));
          else await api.listPets({ limit: 20 });
        },
      },
      {
        name: 'list-pets',
        run: async (api) => {
          await api.listPets({ limit: 20 });
        },
      },
    ],
  };
}

/**
 * One step: the tenants of `perPlan`, each an open arrival at 100% of its own plan with pacing on,
 * for the step's length; its result judged. The generator's event-loop delay is measured over the
 * workload, to tell its own limit from the target's.
 */
export async function runTenantStep(
  input: TenantStepInput,
): Promise<{ step: TenantStep; result: RunResult }> {
  const specs: TenantGroupSpec[] = Object.entries(input.perPlan)
    .filter(([, n]) => n > 0)
    .map(([plan, keys]) => ({ plan, keys, rate: '100%' }));
  const mix = buildTenantMix(specs, input.windowsOf, (plan, n) => input.keyFor(plan, n));
  const rates = specs.map((s) => planRate([...input.windowsOf(s.plan)]));
  const offeredRate = specs.reduce((sum, s, i) => sum + s.keys * (rates[i] as number), 0);
  // Each key may have its own traffic of a few seconds in flight before an arrival is dropped.
  const maxInFlight = Math.max(4, Math.ceil(Math.max(...rates) * IN_FLIGHT_SECONDS));
  const first = specs[0] as TenantGroupSpec;
  const windows = [...input.windowsOf(first.plan)];
  const declared: ConstantArrivalRate = {
    executor: 'constant-arrival-rate',
    rate: '100%',
    duration: input.durationMs,
    maxInFlight,
  };
  const workload = resolveWorkload(declared, planRate(windows));
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  let cpu = { at: performance.now(), usage: process.cpuUsage() };
  let cpuShare = 0;
  try {
    const result = await executeScenario({
      scenario: readScenario(declared),
      workload,
      baseUrl: input.baseUrl,
      network: input.network,
      target: input.target,
      embeddedTarget: input.embeddedTarget,
      apiKey: undefined,
      operations: input.operations,
      plan: first.plan,
      windows,
      timeScale: input.timeScale,
      enforce: true,
      // Every request counts once: a retry would hide the answer that broke the step.
      maxAttempts: 1,
      timeoutMs: input.timeoutMs,
      refusalStatuses: input.refusalStatuses,
      spec: input.spec,
      networkSeen: input.networkSeen,
      signal: input.signal,
      tenants: { mix, loads: tenantLoads(mix, declared, {}, 'open') },
      ...(input.onLive ? { onLive: input.onLive } : {}),
      onWorkload: (running) => {
        if (running) {
          loop.enable();
          cpu = { at: performance.now(), usage: process.cpuUsage() };
        } else {
          loop.disable();
          const used = process.cpuUsage(cpu.usage);
          cpuShare = (used.user + used.system) / 1000 / Math.max(1, performance.now() - cpu.at);
        }
      },
    });
    const lag = loop.count > 0 ? loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS : 0;
    const step = judgeStep(result, {
      perPlan: input.perPlan,
      offeredRate,
      thresholds: input.thresholds,
      loopDelayP99Ms: Math.max(0, lag),
      cpuShare,
    });
    return { step, result };
  } finally {
    loop.disable();
  }
}
