import { DEFAULT_TIMEOUT_MS } from '../api/defaults.ts';
import type { Operation } from '../api/operations.ts';
import type { Plan, RateWindow } from '../api/plans.ts';
import { scalePlan } from '../api/plans.ts';
import { TOOL_VERSION } from '../api/version.ts';
import type { Transport } from '../client/client.ts';
import { now } from '../client/clock.ts';
import { Recorder } from '../record/recorder.ts';
import { buildResult } from '../result/build.ts';
import type { BanReport, CapacityReport } from '../result/capacity-types.ts';
import type { NetworkSeen, RunResult } from '../result/types.ts';
import type { NetworkOptions } from '../transport/network.ts';
import { firstLook } from './discover/look.ts';
import { probeBan } from './measure/ban-probe.ts';
import { walkDayAfter } from './measure/daily.ts';
import type { Measured, PhasesMeasured } from './measure/measured.ts';
import { type CapacityProbeOptions, MeasurePhases } from './measure/phases.ts';
import type { ProbeClient } from './probe-client.ts';
import { type ProbedOperation, petStoreProbe } from './probed-operation.ts';
import { capacityReport } from './report/probe-report.ts';
import { checkModel } from './verify/model-check.ts';

export interface CapacityTarget {
  /** The plan unscaled, as promised. */
  plan: Plan;
  apiKey: string;
  /** Where this key is probed, and the time scale of its windows there. */
  baseUrl: string;
  timeScale: number;
  /** How its requests are sent: a socket to `baseUrl` by default, or a test's simulated target. */
  transport?: Transport;
  /** TLS, HTTP/2 and a proxy for the target's connections. */
  network?: NetworkOptions | undefined;
  /** `--max-wait`: the longest single wait its probe accepts (default: the probe's). */
  maxWaitMs?: number;
}

export interface CapacityInput {
  /** Without credentials. */
  target: string;
  embeddedTarget: boolean;
  targets: CapacityTarget[];
  windows: number;
  /** Also walk each plan's daily quota to its 429. */
  daily?: boolean;
  operations: Operation[];
  /** The request every probe sends; absent: the pet store's page of one pet (`listPets`). */
  probe?: ProbedOperation;
  spec: string;
  /** What the result records of TLS, HTTP/2 and the proxy (config.network). */
  networkSeen?: NetworkSeen | undefined;
  /** `--probe-ban`: the key named for it, and how long its ban may be waited out. */
  ban?: CapacityTarget & {
    maxWaitMs: number;
    /** On a target of its own (the embedded server): alongside the plans. Else after them, since a
     * target may ban the client address rather than the key and spoil every other measurement. */
    alongside: boolean;
  };
  timeoutMs?: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: readonly number[];
  /** Told, per plan, when a probe decides on a longer phase (the rate search) and how long it may take. */
  log?: (plan: string, line: string) => void;
  signal?: AbortSignal;
  /** Given once, when the probes start: the recorder they all record into, read by live metrics. */
  onLive?(live: { recorder: Recorder }): void;
  /**
   * Given once, when the probes start: the result as it stands (every request so far, the plans
   * finished), marked partial: what a second Ctrl-C writes before the process exits at once.
   */
  onSnapshot?(take: () => CapacityRun['result']): void;
}

export interface CapacityRun {
  result: RunResult & { capacity: CapacityReport[] };
  reports: CapacityReport[];
  ban?: BanReport;
}

/**
 * Every plan's key probed in parallel, each attempt recorded into one Recorder so that the header
 * checks run on every response (each against its own plan's windows), and one RunResult with
 * `capacity` beside the usual figures.
 */
export async function runCapacity(input: CapacityInput): Promise<CapacityRun> {
  const probe = input.probe ?? petStoreProbe(input.operations);
  const scaled = input.targets.map((t) => scalePlan(t.plan, t.timeScale));
  const windows: RateWindow[] = scaled.flatMap((p) => p.windows);
  const startedAt = now();
  const windowsByKey = new Map(scaled.map((p) => [p.name, p.windows]));
  const recorder = new Recorder({ startedAt, windows, windowsByKey });
  recorder.measure(true, startedAt);
  input.onLive?.({ recorder });
  const ban = input.ban;
  const banProbe = () => (ban ? probeBan(banInput(ban, probe, input)) : Promise.resolve(undefined));
  // Settled into a value at once: a failure must not surface as an unhandled rejection while the plans run.
  const alongside = ban?.alongside
    ? banProbe().then(
        (report) => ({ report }),
        (error: unknown) => ({ error }),
      )
    : undefined;
  // Each plan's report as it comes: a second Ctrl-C writes the finished ones with every request so far.
  const done: (CapacityReport | undefined)[] = input.targets.map(() => undefined);
  let banReport: BanReport | undefined;
  const resultAt = (endedAt: number, partial: boolean) =>
    capacityResult(input, recorder, {
      windows,
      startedAt,
      endedAt,
      partial,
      reports: done.filter((r) => r !== undefined),
      ban: banReport,
    });
  input.onSnapshot?.(() => resultAt(now(), true));
  const reports = await Promise.all(
    input.targets.map((t, i) => {
      const options: CapacityProbeOptions = {
        baseUrl: t.baseUrl,
        apiKey: t.apiKey,
        plan: scaled[i] as Plan,
        promised: t.plan,
        timeScale: t.timeScale,
        probe,
        sink: recorder,
        windows: input.windows,
        daily: input.daily,
        timeoutMs: input.timeoutMs,
        refusalStatuses: new Set(input.refusalStatuses ?? []),
        maxWaitMs: t.maxWaitMs,
        log: input.log && ((line: string) => input.log?.(t.plan.name, line)),
        signal: input.signal,
        transport: t.transport,
        network: t.network,
      };
      return probePlan(new MeasurePhases(options), options).then((report) => {
        done[i] = report;
        return report;
      });
    }),
  );
  if (alongside) {
    const settled = await alongside;
    if ('error' in settled) throw settled.error;
    banReport = settled.report;
  } else if (!input.signal?.aborted) banReport = await banProbe();
  const endedAt = now();
  recorder.measure(false, endedAt);
  const result = resultAt(endedAt, input.signal?.aborted ?? false);
  return { result, reports, ban: banReport };
}

/**
 * One key, one plan, its stages in order: the first look discovers the order the limiter is measured
 * in, the phases measure it, the model they inferred is verified by a phase paced at it, `daily`
 * walks the rest of the day at the plan rate, and the report is assembled with its verdict.
 */
async function probePlan(probe: MeasurePhases, o: CapacityProbeOptions): Promise<CapacityReport> {
  const { client } = probe;
  try {
    const look = await firstLook(client, { windowMs: probe.windowMs, signal: o.signal });
    const phases = await probe.measure(look);
    const setup = {
      plan: o.plan,
      promised: o.promised,
      timeScale: o.timeScale,
      window: probe.window,
      operation: o.probe.operation,
    };
    const base = measuredSoFar(client, phases, probe.stalledBy);
    // The model the phases inferred, paced at before the day is walked (which would spend it).
    const checked =
      probe.stalledBy || phases.infeasible
        ? undefined
        : await checkModel(client, capacityReport(base, setup).limiter, {
            planWindowMs: probe.windowMs,
            planLimit: probe.window.limit,
            paced: phases.paced,
            guardMs: probe.guardMs,
            stalled: probe.stalled,
            signal: o.signal,
          });
    const walkFrom = { ...phases, dailyAnchor: Math.max(phases.dailyAnchor, checked?.next ?? 0) };
    const measured: Measured = {
      ...base,
      check: checked?.check ?? null,
      stalledBy: probe.stalledBy,
      daily: o.daily ? await walkDayAfter(client, o.plan, probe.window, walkFrom, o.signal) : undefined,
      violations: client.violations,
    };
    measured.durationMs = Math.round(now() - probe.started);
    return capacityReport(measured, setup);
  } finally {
    await client.close();
  }
}

/**
 * What the phases measured, with what the client saw meanwhile. The dialects are those of the
 * answers while the limiter was measured: the check's and the daily walk's answers come after, and
 * would only repeat them.
 */
function measuredSoFar(client: ProbeClient, phases: PhasesMeasured, stalledBy: string | undefined): Measured {
  return {
    ...phases,
    answers: [...client.history],
    limitsTold: [...client.limitsTold].sort((a, b) => a - b),
    refusedWith: new Map(client.refusedWith),
    stalledBy,
    dialects: new Map(client.dialects),
    resetDialects: new Set(client.resetDialects),
    daily: undefined,
    violations: 0,
    durationMs: 0,
  };
}

/** The ban probe's options, from its target and the run's. */
function banInput(ban: NonNullable<CapacityInput['ban']>, probe: ProbedOperation, input: CapacityInput) {
  return {
    baseUrl: ban.baseUrl,
    apiKey: ban.apiKey,
    plan: scalePlan(ban.plan, ban.timeScale),
    timeScale: ban.timeScale,
    probe,
    maxWaitMs: ban.maxWaitMs,
    timeoutMs: input.timeoutMs,
    refusalStatuses: new Set(input.refusalStatuses ?? []),
    signal: input.signal,
    transport: ban.transport,
    network: ban.network,
  };
}

/** The run's result: every request's figures, and the reports of the plans (and ban) measured. */
function capacityResult(
  input: CapacityInput,
  recorder: Recorder,
  o: {
    windows: RateWindow[];
    startedAt: number;
    endedAt: number;
    partial: boolean;
    reports: CapacityReport[];
    ban?: BanReport;
  },
): CapacityRun['result'] {
  const base = buildResult({
    meta: {
      toolVersion: TOOL_VERSION,
      nodeVersion: process.version,
      scenario: 'capacity',
      description: `Capacity of ${input.targets.map((t) => t.plan.name).join(', ')}: plan rate, first 429, quota return`,
      target: input.target,
      embeddedTarget: input.embeddedTarget,
      plan: input.targets.map((t) => t.plan.name).join(','),
      startedAt: new Date(o.startedAt).toISOString(),
      endedAt: new Date(o.endedAt).toISOString(),
      partial: o.partial,
    },
    config: {
      workload: {
        executor: 'capacity',
        windows: input.windows,
        daily: input.daily ?? false,
        plans: input.targets.map((t) => t.plan.name),
      },
      enforce: false,
      // Only the ban probe takes the risk, on its own key; every plan's key keeps the rules.
      allowBanRisk: input.ban !== undefined,
      timeScale: Math.max(...input.targets.map((t) => t.timeScale)),
      windows: o.windows,
      timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxAttempts: 1,
      ...(input.refusalStatuses?.length ? { refusalStatuses: [...input.refusalStatuses] } : {}),
      spec: input.spec,
      ...(input.networkSeen ? { network: input.networkSeen } : {}),
    },
    recorder,
    operations: input.operations,
    workload: { iterations: 0, droppedIterations: 0, failedIterations: 0, flows: {} },
  });
  const result: CapacityRun['result'] = { ...base, capacity: o.reports };
  if (o.ban) result.banProbe = o.ban;
  return result;
}
