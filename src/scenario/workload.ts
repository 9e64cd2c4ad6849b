import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type {
  ConstantArrivalRate,
  ConstantVus,
  RampingArrivalRate,
  RampingVus,
  Rate,
  Workload,
} from './define.ts';

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

/**
 * A ramp's stages as a run of `durationMs` goes through them: a shorter run ends mid-stage (the last
 * stage kept is cut where the run ends, its target the value reached there), a longer one holds the
 * last target for the time left, as `ramp` does. What a result and --print-config show.
 */
export function stagesAsRun(
  start: number,
  stages: readonly { target: number; ms: number }[],
  durationMs: number,
): { target: number; ms: number }[] {
  const at = ramp(start, [...stages]);
  const run: { target: number; ms: number }[] = [];
  let end = 0;
  for (const s of stages) {
    if (end + s.ms >= durationMs) {
      const ms = durationMs - end;
      // Rounded as a person reads it; the run itself ramps on the exact line.
      if (ms > 0) run.push(ms === s.ms ? { ...s } : { target: Math.round(at(durationMs) * 1000) / 1000, ms });
      return run;
    }
    run.push({ ...s });
    end += s.ms;
  }
  run.push({ target: stages.at(-1)?.target ?? start, ms: durationMs - end });
  return run;
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

/** The declared workload with --rate or --vus applied: they change the model, not the run's length or its iteration bound. */
function withModelOverrides(declared: Workload, overrides: WorkloadOverrides): Workload {
  let w: Workload = declared;
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
  return w;
}

/** thinkTime as [min, max] ms: one duration is both ends. */
function thinkRangeMs(w: Workload): [number, number] {
  const think = 'thinkTime' in w && w.thinkTime !== undefined ? w.thinkTime : 0;
  if (Array.isArray(think) && think.length !== 2) throw new InputError('thinkTime: a range is [min, max]');
  const thinkMs: [number, number] = Array.isArray(think)
    ? [parseDuration(think[0], 'thinkTime'), parseDuration(think[1], 'thinkTime')]
    : [parseDuration(think, 'thinkTime'), parseDuration(think, 'thinkTime')];
  if (thinkMs[0] > thinkMs[1]) throw new InputError('thinkTime: the range must be [min, max]');
  return thinkMs;
}

function resolveDeclared(
  declared: Workload,
  planRate: number,
  overrides: WorkloadOverrides,
): ResolvedWorkload {
  const w = withModelOverrides(declared, overrides);
  const iterations = overrides.iterations ?? w.iterations;
  if (iterations !== undefined) whole(iterations, 'workload.iterations');
  const thinkMs = thinkRangeMs(w);
  const maxInFlight =
    'maxInFlight' in w && w.maxInFlight !== undefined ? whole(w.maxInFlight, 'maxInFlight') : 100;
  if (maxInFlight < 1)
    throw new InputError('maxInFlight must be at least 1 (with 0 every iteration would be dropped)');
  const shape: Shape = { iterations, maxInFlight, thinkMs, overrides };
  switch (w.executor) {
    case 'constant-arrival-rate':
    case 'ramping-arrival-rate':
      return openModel(w, planRate, shape);
    case 'constant-vus':
    case 'ramping-vus':
      return closedModel(w, shape);
    default:
      throw new InputError(
        `workload.executor: '${(w as { executor: string }).executor}' is none of constant-arrival-rate, ramping-arrival-rate, constant-vus, ramping-vus`,
      );
  }
}

/** What every executor's resolution shares: checked once, before the executor is looked at. */
interface Shape {
  iterations: number | undefined;
  maxInFlight: number;
  thinkMs: [number, number];
  overrides: WorkloadOverrides;
}

/** A fixed-length executor's duration: --duration over the declared one over the default. */
function fixedDuration(d: unknown, overrides: WorkloadOverrides): number {
  return (
    overrides.durationMs ?? (d === undefined ? DEFAULT_DURATION_MS : parseDuration(d as string, 'duration'))
  );
}

/** Open model: iterations start on a schedule of rates (a plan's share when given as a percentage). */
function openModel(
  w: ConstantArrivalRate | RampingArrivalRate,
  planRate: number,
  shape: Shape,
): ResolvedWorkload {
  switch (w.executor) {
    case 'constant-arrival-rate': {
      const rate = parseRate(w.rate, planRate, 'workload.rate');
      const durationMs = fixedDuration(w.duration, shape.overrides);
      return {
        kind: 'open',
        executor: w.executor,
        durationMs,
        iterations: shape.iterations,
        rateAt: () => rate,
        vusAt: () => 0,
        maxInFlight: shape.maxInFlight,
        thinkMs: shape.thinkMs,
        describe: {
          executor: w.executor,
          rate,
          durationMs,
          maxInFlight: shape.maxInFlight,
          iterations: shape.iterations,
        },
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
      const durationMs = shape.overrides.durationMs ?? stages.reduce((a, s) => a + s.ms, 0);
      return {
        kind: 'open',
        executor: w.executor,
        durationMs,
        iterations: shape.iterations,
        rateAt: ramp(start, stages),
        vusAt: () => 0,
        maxInFlight: shape.maxInFlight,
        thinkMs: shape.thinkMs,
        describe: {
          executor: w.executor,
          startRate: start,
          stages: stagesAsRun(start, stages, durationMs),
          durationMs,
          maxInFlight: shape.maxInFlight,
          iterations: shape.iterations,
        },
      };
    }
  }
}

/** Closed model: virtual users, each one iteration in flight, so the users bound what is in flight. */
function closedModel(w: ConstantVus | RampingVus, shape: Shape): ResolvedWorkload {
  switch (w.executor) {
    case 'constant-vus': {
      const vus = whole(w.vus, 'workload.vus');
      const durationMs = fixedDuration(w.duration, shape.overrides);
      return {
        kind: 'closed',
        executor: w.executor,
        durationMs,
        iterations: shape.iterations,
        rateAt: () => 0,
        vusAt: () => vus,
        maxInFlight: vus,
        thinkMs: shape.thinkMs,
        describe: {
          executor: w.executor,
          vus,
          durationMs,
          thinkMs: shape.thinkMs,
          iterations: shape.iterations,
        },
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
      const durationMs = shape.overrides.durationMs ?? stages.reduce((a, s) => a + s.ms, 0);
      const maxVus = Math.max(start, ...stages.map((s) => s.target));
      return {
        kind: 'closed',
        executor: w.executor,
        durationMs,
        iterations: shape.iterations,
        rateAt: () => 0,
        vusAt: ramp(start, stages),
        maxInFlight: maxVus,
        thinkMs: shape.thinkMs,
        describe: {
          executor: w.executor,
          startVUs: start,
          stages: stagesAsRun(start, stages, durationMs),
          durationMs,
          thinkMs: shape.thinkMs,
          iterations: shape.iterations,
        },
      };
    }
  }
}
