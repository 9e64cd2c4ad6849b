import { DEFAULT_TIMEOUT_MS } from '../../api/defaults.ts';
import { EXIT } from '../../api/exit-codes.ts';
import { InputError } from '../../api/input-error.ts';
import type { Operation } from '../../api/operations.ts';
import { getPlan, type PlanTable, planRate, type RateWindow, scalePlan } from '../../api/plans.ts';
import { now } from '../../client/clock.ts';
import type { Threshold } from '../../report/threshold-parse.ts';
import type { TenantCapacity, TenantStep } from '../../result/capacity-types.ts';
import type { NetworkSeen, RunResult } from '../../result/types.ts';
import type { NetworkOptions } from '../../transport/network.ts';
import { type RampOutcome, rampTenants, tenantCapacityOf, tenantCounts } from './tenant-ramp.ts';
import { runTenantStep, type TenantStepInput } from './tenant-step.ts';

type LiveRun = Parameters<NonNullable<TenantStepInput['onLive']>>[0];

/** The warm-up asks for about this many requests a second, with no more tenants than this. */
const WARMUP_RATE = 100;
const WARMUP_TENANTS = 16;
const WARMUP_MS = 2000;

export interface TenantCapacityInput {
  /** Plan -> proportion. */
  mix: Record<string, number>;
  plans: PlanTable;
  /** The target's windows are the plans' divided by it. */
  timeScale: number;
  /** The n-th key of a plan (1-based): minted by the embedded server, or a file's. */
  keyFor(plan: string, n: number): string;
  start: number;
  /** At most this many tenants: `--max-tenants`, or fewer when a file gives fewer keys. */
  maxTenants: number;
  stepMs: number;
  /** Judged on each step's result; any that fails breaks the step. */
  thresholds: readonly Threshold[];
  baseUrl: string;
  /** TLS, HTTP/2 and a proxy for the target's connections. */
  network?: NetworkOptions | undefined;
  /** Without credentials. */
  target: string;
  embeddedTarget: boolean;
  /** How the headline names the target: 'the reference server', or its URL. */
  targetName: string;
  operations: Operation[];
  spec: string;
  /** What the result records of TLS, HTTP/2 and the proxy (config.network). */
  networkSeen?: NetworkSeen | undefined;
  timeoutMs?: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: readonly number[];
  /** Without it, the first measured step also warms connections and JIT on both sides. */
  warmup?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /**
   * Given as each step's run starts (the warm-up's too): its live recorder, and which step it is:
   * `warmup`, or the step's number of tenants (no two steps of a ramp have the same).
   */
  onLive?(live: LiveRun, step: string): void;
  /**
   * Given once, when the ramp starts: the result over the steps ended so far (undefined before the
   * first), marked partial: what a second Ctrl-C writes before the process exits at once.
   */
  onSnapshot?(take: () => TenantCapacityResult | undefined): void;
}

export type TenantCapacityResult = RunResult & { tenantCapacity: TenantCapacity };

/** Between steps: a tenth of a step (100 ms at least), so that keys reused from step to step stay
 * within any window of their plan, whose quota each step fills for its whole length. */
export const restMsFor = (stepMs: number) => Math.max(100, Math.round(stepMs / 10));

/**
 * The tenants of the warm-up: about WARMUP_RATE requests a second (WARMUP_TENANTS at most), or the
 * first step's when it starts higher, so that it does not meet cold connections.
 */
function warmupTenants(input: TenantCapacityInput, rateOf: (plan: string) => number, least: number): number {
  const probe = tenantCounts(input.mix, Math.max(least, 10));
  const perTenant =
    Object.entries(probe).reduce((sum, [p, n]) => sum + n * rateOf(p), 0) /
    Object.values(probe).reduce((a, b) => a + b, 0);
  const wanted = Math.ceil(WARMUP_RATE / Math.max(perTenant, 1e-9));
  return Math.max(least, Math.min(Math.max(Math.min(wanted, WARMUP_TENANTS), input.start), input.maxTenants));
}

/** What every step's run shares: the target, the keys, the plans' windows, the thresholds. */
function stepCommon(
  input: TenantCapacityInput,
  windowsOf: TenantStepInput['windowsOf'],
): Omit<TenantStepInput, 'perPlan' | 'durationMs' | 'onLive'> {
  return {
    keyFor: input.keyFor,
    windowsOf,
    baseUrl: input.baseUrl,
    network: input.network,
    target: input.target,
    embeddedTarget: input.embeddedTarget,
    operations: input.operations,
    spec: input.spec,
    networkSeen: input.networkSeen,
    timeScale: input.timeScale,
    thresholds: input.thresholds,
    timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    refusalStatuses: input.refusalStatuses ?? [],
    signal: input.signal,
  };
}

/** The unmeasured warm-up, then a rest: its result stands in when no step ran at all. */
async function warmUp(
  input: TenantCapacityInput,
  common: Omit<TenantStepInput, 'perPlan' | 'durationMs'>,
  tenants: number,
  restMs: number,
): Promise<{ warmup: NonNullable<TenantCapacity['warmup']>; warmupResult: RunResult }> {
  const warmup = { tenants, durationMs: Math.min(WARMUP_MS, input.stepMs) };
  input.log?.(`warm-up: ${tenants} tenants for ${warmup.durationMs / 1000} s (not measured)`);
  const perPlan = tenantCounts(input.mix, tenants);
  const warmupResult = (await runTenantStep({ ...common, perPlan, durationMs: warmup.durationMs })).result;
  await rest(restMs, input.signal);
  return { warmup, warmupResult };
}

/**
 * `capacity --tenants`: an unmeasured warm-up, then the ramp (doubling, then bisection), each step
 * a run of its own with a rest before the next. The result's run-wide figures are the largest step
 * that held (else the first), its `tenantCapacity` the number and the curve.
 */
export async function runTenantCapacity(input: TenantCapacityInput): Promise<TenantCapacityResult> {
  const startedAt = now();
  const windowsOf = windowsCache(input.plans, input.timeScale);
  const rateOf = (plan: string) => planRate([...windowsOf(plan)]);
  const least = Object.keys(input.mix).length;
  const restMs = restMsFor(input.stepMs);
  const stopped = () => input.signal?.aborted === true;
  const common = stepCommon(input, windowsOf);
  const live = (step: string): Pick<TenantStepInput, 'onLive'> =>
    input.onLive ? { onLive: (run) => input.onLive?.(run, step) } : {};
  let firstStep: RunResult | undefined;
  let best: { tenants: number; result: RunResult } | undefined;
  const { warmup, warmupResult } =
    input.warmup === false
      ? { warmup: null, warmupResult: undefined }
      : await warmUp(input, { ...common, ...live('warmup') }, warmupTenants(input, rateOf, least), restMs);
  // Every step as it ends, for a snapshot: the latest that held and the latest that broke, as the ramp keeps them.
  const ended: RampOutcome<TenantStep>['steps'] = [];
  const settings = {
    mix: input.mix,
    thresholds: input.thresholds.map((t) => t.expression),
    stepMs: input.stepMs,
    restMs,
    timeScale: input.timeScale,
    start: Math.min(input.maxTenants, Math.max(least, input.start)),
    maxTenants: input.maxTenants,
    warmup,
  };
  const resultOf = (outcome: RampOutcome<TenantStep>, endedAt: number, partial: boolean) => {
    const tenantCapacity = tenantCapacityOf(outcome, settings, input.targetName);
    const base = best?.result ?? firstStep ?? warmupResult;
    if (!base) return undefined;
    return withRamp(base, input, tenantCapacity, {
      startedAt,
      endedAt,
      partial,
      shownStep: best?.tenants ?? tenantCapacity.steps[0]?.tenants ?? null,
    });
  };
  input.onSnapshot?.(() =>
    resultOf(
      {
        steps: ended,
        held: ended.findLast((s) => s.step.held),
        broke: ended.findLast((s) => !s.step.held),
      },
      now(),
      true,
    ),
  );
  let first = true;
  const outcome = await rampTenants<TenantStep & { interrupted?: boolean }>(
    { start: input.start, max: input.maxTenants, least, stopped },
    async (n) => {
      if (!first) await rest(restMs, input.signal);
      first = false;
      const { step, result } = await runTenantStep({
        ...common,
        perPlan: tenantCounts(input.mix, n),
        durationMs: input.stepMs,
        ...live(String(n)),
      });
      firstStep ??= result;
      // A step cut short by Ctrl-C is no verdict: the ramp ends with the steps before it.
      if (stopped()) return { ...step, interrupted: true };
      // Kept: the largest step that held (a step's result holds every key's figures: not all of them).
      if (step.held && (!best || n > best.tenants)) best = { tenants: n, result };
      ended.push({ tenants: n, step });
      input.log?.(stepLine(step));
      return step;
    },
  );
  const result = resultOf(outcome, now(), stopped());
  if (!result) throw new InputError('capacity --tenants: interrupted before any step', EXIT.INTERRUPTED);
  return result;
}

/** The result: a step's figures under the ramp's meta (its whole span), with the number and curve. */
function withRamp(
  base: RunResult,
  input: TenantCapacityInput,
  tenantCapacity: TenantCapacity,
  o: { startedAt: number; endedAt: number; partial: boolean; shownStep: number | null },
): TenantCapacityResult {
  return {
    ...base,
    meta: {
      ...base.meta,
      scenario: 'capacity-tenants',
      description: `Tenants at their quota (${mixLabel(input.mix)}): the largest number that held`,
      plan: Object.keys(input.mix).join(','),
      startedAt: new Date(o.startedAt).toISOString(),
      endedAt: new Date(o.endedAt).toISOString(),
      durationSeconds: Math.round((o.endedAt - o.startedAt) / 10) / 100,
      partial: o.partial,
    },
    config: {
      ...base.config,
      workload: {
        executor: 'capacity-tenants',
        mix: input.mix,
        stepMs: input.stepMs,
        start: tenantCapacity.start,
        maxTenants: input.maxTenants,
        // Which step the run-wide figures are.
        shownStep: o.shownStep,
      },
    },
    tenantCapacity,
  };
}

/** Each plan's windows as the target counts them, scaled once. */
function windowsCache(plans: PlanTable, timeScale: number): (plan: string) => readonly RateWindow[] {
  const windows = new Map<string, readonly RateWindow[]>();
  return (plan) => {
    let w = windows.get(plan);
    if (!w) {
      w = scalePlan(getPlan(plans, plan), timeScale).windows;
      windows.set(plan, w);
    }
    return w;
  };
}

/** `pro`, or `free=4,pro=1`. */
export function mixLabel(mix: Readonly<Record<string, number>>): string {
  const plans = Object.entries(mix);
  return plans.length === 1 ? (plans[0]?.[0] as string) : plans.map(([p, w]) => `${p}=${w}`).join(',');
}

/** One line per step, as it ends. */
export function stepLine(s: TenantStep): string {
  const figures = `${s.tenants} tenants: ${s.rate.toFixed(1)} of ${s.offeredRate.toFixed(1)} req/s, p99 ${s.p99Ms} ms, ${s.errors} errors, ${s.rateLimited} 429s`;
  return `${figures}: ${s.held ? 'held' : `broke (${s.reasons[0]})`}`;
}

/** A pause that Ctrl-C cuts short. */
function rest(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
