import { DEFAULT_TIMEOUT_MS, DEFAULTS } from '../api/defaults.ts';
import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { Operation } from '../api/operations.ts';
import type { PacingCause } from '../api/pacing-causes.ts';
import type { RateWindow } from '../api/plans.ts';
import { responseFormatsNotChecked } from '../api/schema-formats.ts';
import type { TenantKey, TenantMix } from '../api/tenants.ts';
import { TOOL_VERSION } from '../api/version.ts';
import type { SpacingState } from '../client/adaptive-spacing.ts';
import { ApiClient, keysByCause, type Lane, type Transport } from '../client/client.ts';
import { now } from '../client/clock.ts';
import type { SharedQuota } from '../client/gate.ts';
import type { AttemptRecord } from '../record/attempt.ts';
import type { Contract } from '../record/checks/contract.ts';
import { errorCount } from '../record/errors.ts';
import { Recorder } from '../record/recorder.ts';
import { buildResult } from '../result/build.ts';
import { outagesFromStart } from '../result/store-outages.ts';
import type { LimiterSeen, NetworkSeen, RunResult, WorkloadSummary } from '../result/types.ts';
import type { NetworkOptions } from '../transport/network.ts';
import { BudgetHolds } from './budget-holds.ts';
import type { Scenario } from './define.ts';
import { type Coordination, type EngineInput, runScenario, SetupError } from './engine.ts';
import type { Share } from './share.ts';
import type { TenantLoad } from './tenant-load.ts';
import { keepRequestObjectsYoung } from './v8-heap.ts';
import type { ResolvedWorkload } from './workload.ts';

export interface ExecuteInput<D> {
  scenario: Scenario<D>;
  workload: ResolvedWorkload;
  /** Base URL as the client uses it; `target` is what the result shows (no credentials). */
  baseUrl: string;
  target: string;
  embeddedTarget: boolean;
  apiKey: string | undefined;
  operations: Operation[];
  plan: string;
  /** The plan's windows as the target counts them. */
  windows: RateWindow[];
  timeScale: number;
  enforce: boolean;
  allowBanRisk?: boolean;
  /** The target's limiter when known (`--limiter`); else the client learns it from 429s. */
  limiter?: LimiterKind;
  /** `--limiter concurrency:N`: the key's requests in flight at most. */
  maxInFlight?: number;
  /** The rate-limit dialect the checks judge as promised (`--contract`); default the seed's. */
  contract?: Contract;
  timeoutMs?: number;
  maxAttempts?: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: readonly number[];
  /** TLS, HTTP/2 and a proxy for the target's connections, and what the result records of them. */
  network?: NetworkOptions | undefined;
  networkSeen?: NetworkSeen | undefined;
  spec: string;
  /** SIGINT/SIGTERM: aborting it ends the run early with a partial result. */
  signal?: AbortSignal;
  interruptedBy?(): string | undefined;
  seed?: number;
  /** Sees every attempt before the recorder does (tests and tools that need raw attempts). */
  tap?(attempt: AttemptRecord): void;
  /** Told when the workload starts and stops (benchmarks measure CPU over exactly that span). */
  onWorkload?(running: boolean): void;
  /** Called once a second while the workload runs: the live status line, thresholds that abort. */
  onTick?(tick: RunTick): void;
  /** A quota shared with other generators, and how the result names it (no credentials). */
  sharedQuota?: SharedQuota & { label: string };
  /** This generator's part of a run spread over several (the workload is already its share). */
  shard?: Share;
  /** A worker thread of a run: shares setup and teardown with the others. */
  coordination?: Coordination<D>;
  /**
   * A tenant mix: each tenant's key gets a lane of its own in the client (its plan's pacing, its own
   * pauses), and the loads say what each group sends. Setup and teardown use `apiKey`, or the first
   * tenant's key when there is none.
   */
  tenants?: { mix: TenantMix; loads: TenantLoad[] };
  /**
   * Given, once the run starts, a way to build the result as it stands (marked partial): what a
   * second Ctrl-C writes before the process exits at once.
   */
  onSnapshot?(snapshot: () => RunResult): void;
  /** What sends each request (a benchmark of the pipeline alone puts a canned one in; default undici's dispatch). */
  transport?: Transport;
  /** Given once, when the run starts: the live recorder and the client's pacing, read by live metrics. */
  onLive?(live: LiveRun): void;
}

/** What live metrics read while a run goes: its recorder, and what holds its keys back now. */
export interface LiveRun {
  recorder: Recorder;
  pacing(): ReturnType<ApiClient['pacingState']>;
  /** A tenant mix: how many keys each cause holds back now. */
  keys?(): Record<PacingCause, number>;
}

/** The run so far, once a second. */
export interface RunTick {
  elapsedMs: number;
  /** The workload's planned length. */
  durationMs: number;
  requests: number;
  /** Requests per second over the last tick. */
  rate: number;
  rateLimited: number;
  /** 5xx and transport errors. */
  errors: number;
  /** Response time p99 so far, ms. */
  p99Ms: number;
  pacing: ReturnType<ApiClient['pacingState']>;
  /**
   * A tenant mix: how many keys each cause holds back now (`pacing` is only the run's own key's).
   * Asked, not given: it walks every key, and only a status line on a terminal reads it.
   */
  keys?(): Record<PacingCause, number>;
  /** The result so far, marked partial. Encodes every histogram: call it only when needed. */
  snapshot(): RunResult;
}

/** The recorder of a run: its windows and contract, settling long enough for every request in flight. */
function runRecorder<D>(input: ExecuteInput<D>): Recorder {
  return new Recorder({
    startedAt: now(),
    windows: input.windows,
    workloadOnly: true,
    // Verdicts that compare a response with those around it wait for every request that could still
    // be in flight: as long as the request timeout, and some.
    checkOptions: {
      settleAfterMs: (input.timeoutMs ?? DEFAULT_TIMEOUT_MS) + 5_000,
      contract: input.contract,
      limiter: input.limiter,
    },
    ...(input.tenants ? { tenants: input.tenants.mix } : {}),
  });
}

/** The client of a run, every attempt going to the recorder (and first to the tap, when there is one). */
function runClient<D>(input: ExecuteInput<D>, recorder: Recorder): ApiClient {
  const tap = input.tap;
  return new ApiClient({
    baseUrl: input.baseUrl,
    apiKey: input.apiKey,
    keyLabel: input.plan,
    operations: input.operations,
    windows: input.windows,
    enforce: input.enforce,
    allowBanRisk: input.allowBanRisk,
    limiter: input.limiter,
    maxInFlight: input.maxInFlight,
    timeoutMs: input.timeoutMs,
    maxAttempts: input.maxAttempts,
    refusalStatuses: new Set(input.refusalStatuses ?? []),
    connections: input.tenants ? 256 : Math.max(1, Math.min(256, input.workload.maxInFlight)),
    network: input.network,
    sharedQuota: input.sharedQuota,
    transport: input.transport,
    sink: tap
      ? {
          record: (attempt) => {
            tap(attempt);
            recorder.record(attempt);
          },
        }
      : recorder,
  });
}

type ResultOf = (
  workload: WorkloadSummary,
  startedAt: number,
  endedAt: number,
  partial: boolean,
  interruptedBy: string | undefined,
) => RunResult;

/**
 * How the run's result is built, at its end or as it stands (a snapshot, a setup that failed): the
 * same recorder and client read each time, so a partial result says what a whole one would.
 */
function resultBuilder<D>(
  input: ExecuteInput<D>,
  recorder: Recorder,
  client: ApiClient,
  lanes: Map<TenantKey, Lane>,
  holds: BudgetHolds,
): ResultOf {
  return (workload, startedAt, endedAt, partial, interruptedBy) => {
    const result = buildResult({
      meta: {
        toolVersion: TOOL_VERSION,
        nodeVersion: process.version,
        scenario: input.scenario.name,
        ...(input.scenario.description ? { description: input.scenario.description } : {}),
        target: input.target,
        embeddedTarget: input.embeddedTarget,
        plan: input.plan,
        startedAt: new Date(startedAt).toISOString(),
        endedAt: new Date(endedAt).toISOString(),
        partial,
        ...(interruptedBy ? { interruptedBy } : {}),
        ...(input.shard ? { shard: input.shard } : {}),
        ...(input.sharedQuota ? { sharedQuota: input.sharedQuota.label } : {}),
      },
      config: {
        workload: input.workload.describe,
        enforce: input.enforce,
        allowBanRisk: input.allowBanRisk ?? false,
        timeScale: input.timeScale,
        windows: input.windows,
        timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxAttempts: input.maxAttempts ?? DEFAULTS.maxAttempts,
        ...(input.refusalStatuses?.length ? { refusalStatuses: [...input.refusalStatuses] } : {}),
        spec: input.spec,
        ...responseFormatsNotChecked(input.operations),
        ...(input.seed === undefined ? {} : { seed: input.seed }),
        ...(input.contract === undefined ? {} : { contract: input.contract }),
        ...(input.networkSeen === undefined ? {} : { network: input.networkSeen }),
      },
      recorder,
      operations: input.operations,
      workload,
    });
    // A wait the run could not honour (a Retry-After of years) is stated, in the units a person reads.
    const held = client.heldPastEnd();
    if (held && held.until > endedAt) result.compliance.heldPastEnd = held;
    const limiter = limiterSeen(
      input.limiter,
      input.tenants ? lanesSpacing(lanes.values()) : client.spacingState(),
    );
    if (limiter) result.compliance.limiter = limiter;
    const hold = holds.read();
    if (hold) result.compliance.budgetHold = hold;
    const outages = input.sharedQuota?.store.watch?.outages;
    if (outages && outages.length > 0) result.compliance.storeOutages = outagesFromStart(outages, startedAt);
    return result;
  };
}

/** The once-a-second tick while the workload runs; `stop` is safe to call whether it started or not. */
function runTicker<D>(
  input: ExecuteInput<D>,
  recorder: Recorder,
  client: ApiClient,
  keys: (() => Record<PacingCause, number>) | undefined,
  resultOf: ResultOf,
): { start(summary: WorkloadSummary): void; stop(): void } {
  let ticker: NodeJS.Timeout | undefined;
  const start = (summary: WorkloadSummary) => {
    const onTick = input.onTick;
    if (!onTick) return;
    const startedAt = now();
    let lastRequests = 0;
    let lastAt = startedAt;
    ticker = setInterval(() => {
      const at = now();
      const overall = recorder.overall;
      const rate = ((overall.duringWorkload - lastRequests) * 1000) / Math.max(1, at - lastAt);
      lastRequests = overall.duringWorkload;
      lastAt = at;
      onTick({
        elapsedMs: at - startedAt,
        durationMs: input.workload.durationMs,
        requests: overall.duringWorkload,
        rate,
        rateLimited: overall.rateLimited,
        errors: errorCount(overall),
        p99Ms: overall.response.totalCount ? overall.response.getValueAtPercentile(99) / 1000 : 0,
        pacing: client.pacingState(),
        ...(keys ? { keys } : {}),
        snapshot: () => resultOf(summary, startedAt, now(), true, undefined),
      });
    }, 1000);
    // A tick must never keep a finished run alive.
    ticker.unref();
  };
  return { start, stop: () => clearInterval(ticker) };
}

const emptyWorkload = (): WorkloadSummary => ({
  iterations: 0,
  droppedIterations: 0,
  failedIterations: 0,
  flows: {},
});

/**
 * One run from scenario to result: a client and a recorder wired together, the workload driven
 * through them, the result built. The CLI, the tests and the benchmarks all run through here, so
 * what they measure is what users run.
 */
export async function executeScenario<D>(input: ExecuteInput<D>): Promise<RunResult> {
  keepRequestObjectsYoung();
  const recorder = runRecorder(input);
  const client = runClient(input, recorder);
  // A tenant mix's keys, each its own lane: what they learned of the limiter goes in the result.
  const lanes = new Map<TenantKey, Lane>();
  const keys = input.tenants ? () => keysByCause(lanes.values()) : undefined;
  input.onLive?.({ recorder, pacing: () => client.pacingState(), ...(keys ? { keys } : {}) });
  const holds = new BudgetHolds(client, lanes);
  const resultOf = resultBuilder(input, recorder, client, lanes, holds);
  const ticker = runTicker(input, recorder, client, keys, resultOf);

  const runStartedAt = now();
  // The workload's live counters and start, once it runs; until then, setup's span and no iterations.
  let live: { summary: WorkloadSummary; startedAt: number } | undefined;
  input.onSnapshot?.(() =>
    resultOf(
      live?.summary ?? emptyWorkload(),
      live?.startedAt ?? runStartedAt,
      now(),
      true,
      input.interruptedBy?.(),
    ),
  );
  try {
    const output = await runScenario({
      scenario: input.scenario,
      workload: input.workload,
      client,
      signal: input.signal ?? new AbortController().signal,
      seed: input.seed,
      coordination: input.coordination,
      afterSetup: () => recorder.flush(),
      ...tenantWiring(input, client, lanes),
      onWorkload: (running, summary) => {
        recorder.measure(running, now());
        holds.measure(running, now());
        if (running) live = { summary, startedAt: now() };
        if (running) ticker.start(summary);
        else ticker.stop();
        // A store still away when the workload ends is not waited for by teardown: its sends fail.
        if (!running) input.sharedQuota?.store.watch?.giveUp();
        input.onWorkload?.(running);
      },
    });
    const result = resultOf(
      output.workload,
      output.startedAt,
      output.endedAt,
      output.interrupted,
      input.interruptedBy?.(),
    );
    const { setup, teardown } = input.scenario;
    return withPhases(
      result,
      setup ? output.startedAt - runStartedAt : undefined,
      teardown ? now() - output.endedAt : undefined,
    );
  } catch (error) {
    // Setup's requests were measured: the run keeps them, with why it went no further.
    if (error instanceof SetupError)
      error.result = resultOf(emptyWorkload(), runStartedAt, now(), true, error.message);
    throw error;
  } finally {
    ticker.stop();
    await client.close();
  }
}

/** The wall time setup and teardown took around the workload, in the result's meta: those the scenario has. */
function withPhases(
  result: RunResult,
  setupMs: number | undefined,
  teardownMs: number | undefined,
): RunResult {
  if (setupMs !== undefined) result.meta.setupSeconds = Math.max(0, Math.round(setupMs) / 1000);
  if (teardownMs !== undefined) result.meta.teardownSeconds = Math.max(0, Math.round(teardownMs) / 1000);
  return result;
}

/** The limiter as the run met it, when it was given or taught the client something. */
function limiterSeen(given: LimiterKind | undefined, s: SpacingState): LimiterSeen | undefined {
  const capped = s.maxInFlight !== undefined || s.concurrencyCuts > 0;
  if (given === undefined && s.inferred === undefined && s.decreases === 0 && s.floorMs === 0 && !capped)
    return undefined;
  return {
    model: given ?? s.inferred ?? (s.maxInFlight !== undefined ? 'concurrency' : 'unknown'),
    given: given !== undefined,
    gapMs: Math.round(s.floorMs * 10) / 10,
    rateCuts: s.decreases,
    ...(s.maxInFlight === undefined ? {} : { maxInFlight: s.maxInFlight }),
    ...(s.concurrencyCuts > 0 ? { inFlightCuts: s.concurrencyCuts } : {}),
  };
}

/**
 * What a mix's keys learned of the limiter together: a GCRA if any key learned one, the widest gap
 * any key kept, and every key's rate cuts. Read once, when the result is built (not per request).
 */
function lanesSpacing(lanes: Iterable<Lane>): SpacingState {
  const all: SpacingState = {
    inferred: undefined,
    floorMs: 0,
    capMs: 0,
    decreases: 0,
    maxInFlight: undefined,
    concurrencyCuts: 0,
  };
  for (const lane of lanes) {
    const s = lane.spacingState();
    all.inferred ??= s.inferred;
    all.floorMs = Math.max(all.floorMs, s.floorMs);
    all.capMs = Math.max(all.capMs, s.capMs);
    all.decreases += s.decreases;
    // The tightest cap any key kept: keys of one plan meet the same limiter.
    if (s.maxInFlight !== undefined)
      all.maxInFlight = Math.min(all.maxInFlight ?? s.maxInFlight, s.maxInFlight);
    all.concurrencyCuts += s.concurrencyCuts;
  }
  return all;
}

/** The engine's view of a tenant mix: a lane per tenant, and the key setup and teardown use. */
function tenantWiring<D>(
  input: ExecuteInput<D>,
  client: ApiClient,
  lanes: Map<TenantKey, Lane>,
): Pick<EngineInput<D>, 'tenants' | 'setupCaller'> {
  const tenants = input.tenants;
  if (!tenants) return {};
  // One lane per key: setup's calls through the first tenant's key are paced with its workload's.
  const laneOf = (t: TenantKey): Lane => {
    let lane = lanes.get(t);
    if (!lane) {
      lane = client.lane(t);
      lanes.set(t, lane);
    }
    return lane;
  };
  const first = tenants.mix.tenants[0];
  return {
    tenants: { loads: tenants.loads, caller: laneOf },
    ...(input.apiKey === undefined && first ? { setupCaller: laneOf(first) } : {}),
  };
}
