import { dirname } from 'node:path';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import type { RateWindow } from '../api/plans.ts';
import { TENANT_SEED_ENV, type TenantMix } from '../api/tenants.ts';
import type { SharedQuota } from '../client/gate.ts';
import { quotaKeyName, RedisQuotaStore } from '../client/redis-quota-store.ts';
import { publicTarget } from '../config/base-url.ts';
import type { RunConfig } from '../config/run.ts';
import type { LiveMetrics } from '../metrics/live-metrics.ts';
import { evaluateThreshold } from '../report/threshold-evaluate.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';
import type { RunTick } from '../scenario/execute.ts';
import { SetupError } from '../scenario/setup-teardown.ts';
import type { WorkerJob } from '../scenario/worker-job.ts';
import { Checkpoints } from './checkpoint.ts';
import { spawnServer } from './embedded-server.ts';
import { checkReachable, reachable } from './reachable.ts';
import { pacedPreparationLine } from './run-announce.ts';
import type { FleetRun } from './run-fleet.ts';
import { type OutputOptions, resultDir, runExitCode, writeRunOutputs } from './run-output.ts';
import { type Ending, judge, tell } from './run-verdict.ts';
import { type Session, withSession } from './session.ts';
import { keyHint } from './setup-failure.ts';
import { failsForGood } from './thresholds.ts';
import { checkOutputDir } from './write-output.ts';

/** A mix as worker threads take it: plain data, the keys in tenant order (in memory only). */
function tenantJob(mix: TenantMix): NonNullable<WorkerJob['tenants']> {
  const windowsByPlan: Record<string, RateWindow[]> = {};
  for (const t of mix.tenants) windowsByPlan[t.tenant.plan] ??= [...t.tenant.windows];
  return { specs: mix.groups.map((g) => g.spec), keys: mix.tenants.map((t) => t.key), windowsByPlan };
}

/** The target: the embedded server started for this run, or the given one, checked reachable. */
async function startTarget(config: RunConfig, session: Session<RunOutputs>): Promise<URL> {
  if (config.baseUrl) {
    await checkReachable(config.baseUrl, config.network.options, publicTarget(config.baseUrl));
    return config.baseUrl;
  }
  const minted = config.tenants?.minted;
  const serverArgs = ['--time-scale', String(config.timeScale)];
  if (config.plansFile) serverArgs.push('--plans', config.plansFile);
  if (minted) serverArgs.push('--tenant-keys', minted.flag);
  // The minting seed goes through the environment: no key, and nothing to derive one, on a command line.
  const server = session.own(
    await spawnServer(serverArgs, minted ? { [TENANT_SEED_ENV]: minted.seed } : undefined),
  );
  return new URL(server.url);
}

/** The key's quota shared through `--quota-store`, connected before any traffic. */
async function connectQuota(
  config: RunConfig,
  session: Session<RunOutputs>,
): Promise<(SharedQuota & { label: string }) | undefined> {
  const address = config.quotaStore;
  if (!address) return undefined;
  let store: RedisQuotaStore;
  try {
    store = await RedisQuotaStore.connect(address.url);
  } catch (error) {
    throw new InputError(
      `--quota-store ${address.label}: cannot connect (${(error as Error).message})`,
      EXIT.UNREACHABLE,
    );
  }
  session.defer(() => store.close());
  return {
    store,
    key: quotaKeyName(config.apiKey?.reveal() ?? 'anonymous'),
    label: address.label,
    ...(config.localShare ? { localShare: config.localShare } : {}),
  };
}

type RunOutputs = ReturnType<typeof writeRunOutputs>;

/**
 * The labels on every series a run pushes: never a key (the target without credentials); a fleet's
 * generator adds its fleet and shard, so that N generators' series stay apart and sum to the fleet.
 */
export function metricsIdentity(
  config: Pick<RunConfig, 'scenario' | 'planName' | 'fleet' | 'shard'>,
  baseUrl: URL,
): Record<string, string> {
  return {
    scenario: config.scenario.name,
    target: publicTarget(baseUrl),
    plan: config.planName,
    ...(config.fleet && config.shard ? { fleet: config.fleet.name, shard: String(config.shard.index) } : {}),
  };
}

/** What the run holds while it runs: its session, its target, how far it got, and what ended it early. */
interface RunState {
  config: RunConfig;
  session: Session<RunOutputs>;
  baseUrl: URL;
  sharedQuota: (SharedQuota & { label: string }) | undefined;
  metrics: LiveMetrics | undefined;
  checkpoints: Checkpoints;
  /** The result as it stands, for a checkpoint (a second Ctrl-C takes the session's snapshot). */
  soFar: { ask?(): RunResult | Promise<RunResult | undefined> };
  abortedBy: ThresholdResult | undefined;
  /** `--fleet`: this generator's part in it (setup once, one start, live totals, one verdict). */
  fleet: FleetRun | undefined;
  /** Its live totals and merged verdict: loaded only for a fleet. */
  fleetFinish: typeof import('./fleet-finish.ts') | undefined;
}

/**
 * Where the run's outputs go, and its checkpoints beside them: the final write (at the end, or on a
 * second Ctrl-C) puts the result beside the last checkpoint and removes it.
 */
function runOutputs(config: RunConfig) {
  const outputs: OutputOptions = { scenario: config.scenario.name, ...config.outputs };
  const soFar: RunState['soFar'] = {};
  const checkpoints = new Checkpoints({
    intervalMs: config.checkpointMs,
    take: () => soFar.ask?.(),
    // The first write fixes the output directory: the final result goes beside its checkpoint.
    dirOf: (result) => {
      outputs.out = resultDir(result, outputs);
      return outputs.out;
    },
  });
  const write = (result: RunResult) => {
    const written = writeRunOutputs(result, outputs);
    checkpoints.finish(written.path && dirname(written.path));
    return written;
  };
  return { outputs, soFar, checkpoints, write };
}

/** Starts what the run needs in its session, runs it, and writes what it measured. */
export function execute(
  given: RunConfig,
  resolveShard: (shard: string) => Promise<RunConfig>,
): Promise<number> {
  checkOutputDir(given.outputs.out);
  const { outputs, soFar, checkpoints, write } = runOutputs(given);
  return withSession({ label: '', quiet: given.quiet, write }, async (session) => {
    const baseUrl = await startTarget(given, session);
    // A fleet's generator knows its shard once it has joined; nothing is sent before all have.
    const fleet = given.fleet
      ? await (await import('./run-fleet.ts')).joinRunFleet(given, resolveShard, {
          signal: session.interrupt.signal,
          stoppedByUser: () => stoppedByUser(session),
          defer: (close) => session.defer(close),
        })
      : undefined;
    if (fleet) {
      // Its own result goes beneath the fleet's; the CI outputs are the fleet's verdict's.
      outputs.out = fleet.fleet.shardOut;
      outputs.ci = false;
    }
    const config = fleet?.config ?? given;
    const sharedQuota = await connectQuota(config, session);
    if (session.stoppedEarly()) return EXIT.INTERRUPTED;
    const metrics = await session.useMetrics(
      config.metrics && {
        ...config.metrics,
        identity: metricsIdentity(config, baseUrl),
        windows: config.windows,
      },
    );
    session.defer(() => checkpoints.stop());
    const run: RunState = {
      config,
      session,
      baseUrl,
      sharedQuota,
      metrics,
      checkpoints,
      soFar,
      abortedBy: undefined,
      fleet: fleet?.fleet,
      fleetFinish: fleet ? await import('./fleet-finish.ts') : undefined,
    };
    const paced = config.quiet ? undefined : pacedPreparationLine(config);
    if (paced) process.stderr.write(`petstore-load: ${paced}\n`);
    return measure(run);
  });
}

/** The traffic, the result it came to (setup's failure too, when it measured something), and the outputs. */
async function measure(run: RunState): Promise<number> {
  const { config, session } = run;
  let result: RunResult;
  let setupFailure: string | undefined;
  try {
    result = await traffic(run);
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    setupFailure = `scenario ${config.scenario.name}: ${error.message}${keyHint(config, error.message, error.result)}`;
    // Setup's requests were measured: with them, the run's outputs are written as for any run.
    if (!error.result) {
      const unreachable = !config.embedded && !(await reachable(run.baseUrl, config.network.options));
      throw new InputError(setupFailure, unreachable ? EXIT.UNREACHABLE : EXIT.USAGE);
    }
    result = error.result;
  }
  // Before the result is written: the last push carries the final counters, whatever is then written.
  await session.endMeasuring(result);
  await run.checkpoints.stop();
  const ending = { config, abortedBy: run.abortedBy, setupFailure };
  if (!run.fleet || !run.fleetFinish) return finishRun(result, { ...ending, session });
  return run.fleetFinish.finishFleet(result, run.fleet, {
    ...ending,
    writeShard: (r) => session.write(r),
    stoppedByUser: () => stoppedByUser(session),
    log: (line) => process.stderr.write(`petstore-load: ${line}\n`),
  });
}

/** Stopped by a signal, not by a threshold: the user's word. */
function stoppedByUser(session: Session<RunOutputs>): boolean {
  return session.interrupt.by?.startsWith('SIG') ?? false;
}

/** The live line, and `--abort-on-fail`'s thresholds judged each tick. */
function onTickOf(run: RunState): (tick: RunTick) => void {
  const { config } = run;
  const { interrupt, progress } = run.session;
  const live = !config.quiet && progress.enabled;
  if (run.fleet && run.fleetFinish)
    return run.fleetFinish.fleetTicks(run.fleet, {
      config,
      live: live ? progress : undefined,
      stopped: () => run.abortedBy !== undefined || interrupt.aborted,
      abort: (verdict) => {
        run.abortedBy = verdict;
        interrupt.abort(`threshold ${verdict.expression}`);
      },
    });
  const abortable = config.thresholds.filter((t) => t.abortOnFail);
  return (tick) => {
    if (live) progress.update(tick);
    if (run.abortedBy || interrupt.aborted) return;
    const due = abortable.filter((t) => tick.elapsedMs >= t.delayAbortEvalMs);
    if (due.length === 0) return;
    const soFar = tick.snapshot();
    for (const t of due) {
      const verdict = evaluateThreshold(t, soFar);
      if (!failsForGood(t, verdict, soFar)) continue;
      run.abortedBy = { ...verdict, aborted: true };
      interrupt.abort(`threshold ${t.expression}`);
      return;
    }
  };
}

/** The traffic itself: in this thread, or spread over `--workers` threads. */
async function traffic(run: RunState): Promise<RunResult> {
  const { config, baseUrl, checkpoints, metrics, session } = run;
  const { interrupt } = session;
  const apiKey = config.apiKey?.reveal();
  // What one generator and each worker thread alike are told.
  const common = {
    baseUrl: baseUrl.href,
    target: publicTarget(baseUrl),
    embeddedTarget: config.embedded,
    apiKey,
    plan: config.planName,
    windows: config.windows,
    timeScale: config.timeScale,
    enforce: config.enforce,
    allowBanRisk: config.allowBanRisk,
    limiter: config.limiter?.kind,
    maxInFlight: config.limiter?.maxInFlight,
    contract: config.contract,
    timeoutMs: config.timeoutMs,
    maxAttempts: config.maxAttempts,
    refusalStatuses: config.refusalStatuses,
    network: config.network.options,
    networkSeen: config.network.seen,
    spec: config.specLabel,
    seed: config.seed,
    shard: config.shard,
  };
  // One generator's engine, or the threads': only the one used is loaded (the engine brings undici).
  if (config.workers > 1)
    return (await import('../scenario/workers.ts')).runWorkers({
      count: config.workers,
      signal: interrupt.signal,
      interruptedBy: () => interrupt.by,
      onSnapshots: (threads) => {
        // A second Ctrl-C exits at once: worker threads are asked for their parts and waited for a second at most.
        session.onSnapshot(() => threads.askNow(1000));
        run.soFar.ask = () => threads.ask(5000);
      },
      onWorkload: () => checkpoints.start(),
      job: {
        ...common,
        scenarioPath: config.scenarioPath,
        operations: config.spec.operations,
        overrides: config.overrides,
        planRate: config.planRate,
        ...(config.tenants ? { tenants: tenantJob(config.tenants.mix) } : {}),
        quota: config.quotaStore
          ? {
              kind: 'redis',
              ...config.quotaStore,
              key: quotaKeyName(apiKey ?? 'anonymous'),
              ...(config.localShare ? { localShare: config.localShare } : {}),
            }
          : { kind: 'port', key: 'run' },
      },
    });
  const tenants = config.tenants && { mix: config.tenants.mix, loads: config.tenants.loads };
  return (await import('../scenario/execute.ts')).executeScenario({
    ...common,
    scenario: config.scenario,
    workload: config.workload,
    operations: config.spec.operations,
    signal: interrupt.signal,
    interruptedBy: () => interrupt.by,
    onTick: onTickOf(run),
    sharedQuota: run.sharedQuota,
    onSnapshot: (take) => {
      session.onSnapshot(take);
      run.soFar.ask = take;
    },
    // Checkpoints count from the workload's start: setup has nothing worth keeping yet.
    onWorkload: (running) => {
      if (running) checkpoints.start();
    },
    ...(tenants ? { tenants } : {}),
    ...(metrics ? { onLive: (live) => metrics.start(live) } : {}),
    ...(run.fleet ? { coordination: run.fleet.coordination } : {}),
  });
}

/** After the traffic: the verdicts joined to the result, every output written, the summary printed. */
function finishRun(result: RunResult, o: Ending & { session: Session<RunOutputs> }): number {
  const comparison = judge(result, o);
  const { path, written, failed } = o.session.write(result);
  const exitCode = runExitCode(result, {
    interrupted: result.meta.partial && !o.abortedBy && !o.setupFailure,
    setupFailed: o.setupFailure !== undefined,
    writeFailed: failed,
  });
  return tell(result, { ...o, exitCode, path, lines: [...written, comparison ?? ''] });
}
