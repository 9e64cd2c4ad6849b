import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type { Rate, Workload } from './define.ts';

export interface ResolvedWorkload {
  kind: 'open' | 'closed';
  executor: Workload['executor'];
  durationMs: number;
  iterations: number | undefined;
  /** Open model: iterations per second at `ms` since start. */
  rateAt(ms: number): number;
  /** Closed model: virtual users at `ms` since start. */
  vusAt(ms: number): number;
  maxInFlight: number;
  thinkMs: [number, number];
  /** For the result: the workload as it ran, in plain numbers. */
  describe: Record<string, unknown>;
}

export interface WorkloadOverrides {
  durationMs?: number;
  /** Turns the workload into constant-arrival-rate. */
  rate?: Rate;
  /** Turns the workload into constant-vus. */
  vus?: number;
  iterations?: number;
}

export const DEFAULT_DURATION_MS = 30_000;

export function parseRate(rate: Rate, planRate: number, what: string): number {
  if (typeof rate === 'number') {
    if (Number.isFinite(rate) && rate >= 0) return rate;
    throw new InputError(`${what}: a rate must be a number >= 0 or a share like '100%'`);
  }
  const m = /^(\d+(?:\.\d+)?)%$/.exec(String(rate));
  if (!m)
    throw new InputError(
      `${what}: '${rate}' is not a rate (a number of iterations per second, or '80%' of the plan)`,
    );
  return (Number(m[1]) / 100) * planRate;
}

/** Piecewise-linear ramp through stages, as k6 ramps its targets. */
function ramp(start: number, stages: { target: number; ms: number }[]): (ms: number) => number {
  return (t) => {
    let from = start;
    let at = 0;
    for (const s of stages) {
      if (t < at + s.ms) return from + ((s.target - from) * (t - at)) / s.ms;
      at += s.ms;
      from = s.target;
    }
    return from;
  };
}

function whole(n: unknown, what: string): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
    throw new InputError(`${what} must be a whole number >= 0`);
  return n;
}

/**
 * Turns a declared workload (plus CLI overrides) into functions of time. A workload that can run
 * nothing (no time, no iteration, no virtual user, a rate of 0) is an error, not a quiet default.
 */
export function resolveWorkload(
  declared: Workload,
  planRate: number,
  overrides: WorkloadOverrides = {},
): ResolvedWorkload {
  const resolved = resolveDeclared(declared, planRate, overrides);
  refuseEmpty(resolved, overrides);
  return resolved;
}

function refuseEmpty(w: ResolvedWorkload, overrides: WorkloadOverrides): void {
  const empty = (flag: string, field: string, what: string) => {
    throw new InputError(
      `${overrides[flag as keyof WorkloadOverrides] !== undefined ? `--${flag === 'durationMs' ? 'duration' : flag}` : `workload.${field}`} is 0: ${what}`,
    );
  };
  if (w.durationMs <= 0) empty('durationMs', 'duration', 'a run needs a duration above 0 (e.g. 30s)');
  if (w.iterations === 0) empty('iterations', 'iterations', 'a run needs at least one iteration');
  // A ramp is linear between its stages' ends: if it is 0 at each of them, it is 0 throughout.
  const points = [0];
  for (const stage of (w.describe.stages as { ms: number }[] | undefined) ?? [])
    points.push((points.at(-1) as number) + stage.ms);
  if (w.kind === 'closed' && points.every((ms) => w.vusAt(ms) <= 0))
    empty('vus', w.executor === 'ramping-vus' ? 'stages' : 'vus', 'a run needs at least one virtual user');
  if (w.kind === 'open' && points.every((ms) => w.rateAt(ms) <= 0))
    empty(
      'rate',
      w.executor === 'ramping-arrival-rate' ? 'stages' : 'rate',
      'a run needs an arrival rate above 0',
    );
}

function resolveDeclared(
  declared: Workload,
  planRate: number,
  overrides: WorkloadOverrides,
): ResolvedWorkload {
  let w: Workload = declared;
  // --rate and --vus change the model, not the run's length or its iteration bound.
  const declaredDuration =
    'duration' in declared && declared.duration !== undefined
      ? declared.duration
      : 'stages' in declared && Array.isArray(declared.stages)
        ? declared.stages.reduce((sum, s, i) => sum + parseDuration(s?.duration, `stages[${i}].duration`), 0)
        : undefined;
  if (overrides.rate !== undefined) {
    w = {
      executor: 'constant-arrival-rate',
      rate: overrides.rate,
      duration: declaredDuration,
      iterations: declared.iterations,
      maxInFlight: 'maxInFlight' in declared ? declared.maxInFlight : undefined,
    };
  }
  if (overrides.vus !== undefined) {
    w = {
      executor: 'constant-vus',
      vus: overrides.vus,
      duration: declaredDuration,
      iterations: declared.iterations,
      thinkTime: 'thinkTime' in declared ? declared.thinkTime : undefined,
    };
  }
  const iterations = overrides.iterations ?? w.iterations;
  if (iterations !== undefined) whole(iterations, 'workload.iterations');
  const think = 'thinkTime' in w && w.thinkTime !== undefined ? w.thinkTime : 0;
  if (Array.isArray(think) && think.length !== 2) throw new InputError('thinkTime: a range is [min, max]');
  const thinkMs: [number, number] = Array.isArray(think)
    ? [parseDuration(think[0], 'thinkTime'), parseDuration(think[1], 'thinkTime')]
    : [parseDuration(think, 'thinkTime'), parseDuration(think, 'thinkTime')];
  if (thinkMs[0] > thinkMs[1]) throw new InputError('thinkTime: the range must be [min, max]');
  const maxInFlight =
    'maxInFlight' in w && w.maxInFlight !== undefined ? whole(w.maxInFlight, 'maxInFlight') : 100;
  if (maxInFlight < 1)
    throw new InputError('maxInFlight must be at least 1 (with 0 every iteration would be dropped)');
  const fixedDuration = (d: unknown) =>
    overrides.durationMs ?? (d === undefined ? DEFAULT_DURATION_MS : parseDuration(d as string, 'duration'));

  switch (w.executor) {
    case 'constant-arrival-rate': {
      const rate = parseRate(w.rate, planRate, 'workload.rate');
      const durationMs = fixedDuration(w.duration);
      return {
        kind: 'open',
        executor: w.executor,
        durationMs,
        iterations,
        rateAt: () => rate,
        vusAt: () => 0,
        maxInFlight,
        thinkMs,
        describe: { executor: w.executor, rate, durationMs, maxInFlight, iterations },
      };
    }
    case 'ramping-arrival-rate': {
      if (!Array.isArray(w.stages) || w.stages.length === 0)
        throw new InputError('workload.stages: at least one stage');
      const stages = w.stages.map((s, i) => ({
        target: parseRate(s.target, planRate, `stages[${i}].target`),
        ms: parseDuration(s.duration, `stages[${i}].duration`),
      }));
      const start = parseRate(w.startRate ?? 0, planRate, 'workload.startRate');
      const durationMs = overrides.durationMs ?? stages.reduce((a, s) => a + s.ms, 0);
      return {
        kind: 'open',
        executor: w.executor,
        durationMs,
        iterations,
        rateAt: ramp(start, stages),
        vusAt: () => 0,
        maxInFlight,
        thinkMs,
        describe: { executor: w.executor, startRate: start, stages, maxInFlight, iterations },
      };
    }
    case 'constant-vus': {
      const vus = whole(w.vus, 'workload.vus');
      const durationMs = fixedDuration(w.duration);
      return {
        kind: 'closed',
        executor: w.executor,
        durationMs,
        iterations,
        rateAt: () => 0,
        vusAt: () => vus,
        maxInFlight: vus,
        thinkMs,
        describe: { executor: w.executor, vus, durationMs, thinkMs, iterations },
      };
    }
    case 'ramping-vus': {
      if (!Array.isArray(w.stages) || w.stages.length === 0)
        throw new InputError('workload.stages: at least one stage');
      const stages = w.stages.map((s, i) => ({
        target: whole(s.target, `stages[${i}].target`),
        ms: parseDuration(s.duration, `stages[${i}].duration`),
      }));
      const start = whole(w.startVUs ?? 0, 'workload.startVUs');
      const durationMs = overrides.durationMs ?? stages.reduce((a, s) => a + s.ms, 0);
      const maxVus = Math.max(start, ...stages.map((s) => s.target));
      return {
        kind: 'closed',
        executor: w.executor,
        durationMs,
        iterations,
        rateAt: () => 0,
        vusAt: ramp(start, stages),
        maxInFlight: maxVus,
        thinkMs,
        describe: { executor: w.executor, startVUs: start, stages, thinkMs, iterations },
      };
    }
    default:
      throw new InputError(
        `workload.executor: '${(w as { executor: string }).executor}' is none of constant-arrival-rate, ramping-arrival-rate, constant-vus, ramping-vus`,
      );
  }
}
