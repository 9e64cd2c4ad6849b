import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Argv } from 'yargs';
import { withAuthHeaderFlag } from '../api/auth.ts';
import { demoKeyFor } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { parseLimiter } from '../api/limiter-kinds.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  type RateWindow,
  scalePlan,
} from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import {
  buildTenantMix,
  keysPerPlan,
  mintedKey,
  parseTenantsFile,
  specsFromKeys,
  TENANT_SEED_ENV,
  type TenantMix,
  validateTenantSpecs,
} from '../api/tenants.ts';
import type { SharedQuota } from '../client/gate.ts';
import { quotaKeyName, RedisQuotaStore } from '../client/redis-quota-store.ts';
import { metricsFlags, metricsOptions, stopMetrics } from '../metrics/cli.ts';
import { LiveMetrics } from '../metrics/live-metrics.ts';
import { CONTRACTS } from '../record/checks/contract.ts';
import { resultFromJson } from '../report/result-input.ts';
import { evaluateThreshold, evaluateThresholds } from '../report/threshold-evaluate.ts';
import { parseTolerances } from '../report/tolerances.ts';
import type { RunResult, ThresholdResult } from '../result/types.ts';
import type { Rate, Scenario } from '../scenario/define.ts';
import { SetupError } from '../scenario/engine.ts';
import { executeScenario, type RunTick } from '../scenario/execute.ts';
import { loadScenario } from '../scenario/load.ts';
import { probeResultsOf } from '../scenario/probes.ts';
import { parseShare, shareOf, shareOfCounts } from '../scenario/share.ts';
import { refuseRatesInClosedModel, tenantLoads } from '../scenario/tenant-load.ts';
import type { WorkerJob } from '../scenario/worker-job.ts';
import { runWorkers } from '../scenario/workers.ts';
import { resolveWorkload } from '../scenario/workload.ts';
import {
  CHECKPOINT_FILE,
  Checkpoints,
  DEFAULT_CHECKPOINT_INTERVAL,
  parseCheckpointInterval,
} from './checkpoint.ts';
import { baselineVerdict, compareWithBaseline, MAX_REGRESSION_DESCRIPTION } from './compare.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { EXIT } from './exit-codes.ts';
import { Interrupt } from './interrupt.ts';
import { ProgressLine } from './progress.ts';
import { parseQuotaStoreUrl } from './quota-store-url.ts';
import { reachable } from './reachable.ts';
import { readJsonFile } from './read-json-file.ts';
import {
  neverAnsweredLine,
  type OutputOptions,
  resultDir,
  runExitCode,
  storeLostLine,
  writeRunOutputs,
} from './run-output.ts';
import { failureLine, formatSummary } from './summary.ts';
import { collectThresholds, failsForGood } from './thresholds.ts';

/** The embedded server compresses time so a default run crosses several windows in seconds. */
export const EMBEDDED_TIME_SCALE = 10;

export function runOptions(yargs: Argv) {
  return metricsOptions(
    yargs
      .positional('scenario', {
        type: 'string',
        default: 'mixed-traffic',
        describe: 'A name in scenarios/ or a path to a .ts file',
      })
      .option('base-url', {
        type: 'string',
        describe: 'Target; without it the reference server is started on 127.0.0.1',
      })
      .option('api-key', {
        type: 'string',
        describe: 'API key (or env PETSTORE_API_KEY); never printed or written',
      })
      .option('plan', { type: 'string', describe: "Plan to pace for (default: the scenario's, else free)" })
      .option('plans', { type: 'string', describe: 'JSON file overriding plan limits and windows' })
      .option('time-scale', {
        type: 'number',
        describe: `Divide the plan's windows by N (the embedded server runs at ${EMBEDDED_TIME_SCALE})`,
      })
      .option('duration', { type: 'string', describe: 'Run length, e.g. 30s (overrides the scenario)' })
      .option('rate', {
        type: 'string',
        describe: "Open model: iterations per second, or a share of the plan like '100%'",
      })
      .option('vus', { type: 'number', describe: 'Closed model: virtual users' })
      .option('iterations', { type: 'number', describe: 'Stop after this many iterations' })
      .option('out', {
        type: 'string',
        describe: 'Directory for result.json (default reports/<scenario>-<time>/)',
      })
      .option('checkpoint', {
        type: 'string',
        default: DEFAULT_CHECKPOINT_INTERVAL,
        describe: `Write the result so far to ${CHECKPOINT_FILE} beside result.json this often (e.g. 30s; 'off': never), so that a run killed outright keeps what it measured; removed once result.json is written`,
      })
      .option('spec', { type: 'string', describe: 'OpenAPI document of the target (default ours)' })
      .option('auth-header', {
        type: 'string',
        describe:
          "Send the key in this header, as-is, whatever the document's security says ('Authorization': as Bearer)",
      })
      .option('enforce', {
        choices: ['on', 'off'],
        describe: 'Plan pacing; off (raw mode) exceeds quotas on purpose',
      })
      .option('limiter', {
        type: 'string',
        describe:
          "The target's limiter, when known: gcra or token-bucket (nginx limit_req, most gateways) keep the plan's spacing between any two sends from the start; fixed-window or sliding-window learn no gap; concurrency:N (nginx limit_conn, Stripe, GitHub's secondary limits) keeps at most N requests of the key in flight, concurrency alone learns N from the 429s. Default: learned from the server's 429s (a 429 that came while others of the key were in flight lowers the key's in-flight cap)",
      })
      .option('contract', {
        choices: CONTRACTS,
        default: 'seed' as const,
        describe:
          "The rate-limit dialect the checks judge as promised: the seed's X-RateLimit-* (Reset a Unix time), another limiter's, ietf (any IETF draft) or any (whatever the server speaks)",
      })
      .option('allow-ban-risk', {
        type: 'boolean',
        default: false,
        describe: 'In raw mode, also lift the ban guard',
      })
      .option('timeout', { type: 'string', default: '10s', describe: 'Request timeout' })
      .option('max-attempts', {
        type: 'number',
        default: 3,
        describe: 'Attempts for 5xx and transport errors (idempotent methods)',
      })
      .option('seed', { type: 'number', describe: 'Seed of the flow choices, for repeatable runs' })
      .option('quiet', {
        type: 'boolean',
        default: false,
        describe: 'No live status line and no summary table: only the result path',
      })
      .option('threshold', {
        type: 'string',
        array: true,
        describe:
          "Pass/fail criterion, repeatable: [operation:]metric<op>value, e.g. 'p99<300ms', 'listPets:p95<100ms', 'errors<1%', 'checks>=100%', 'rps>=50', 'quota_utilization>=95%', 'violations==0'. Latency is response time; any failure exits 1",
      })
      .option('abort-on-fail', {
        type: 'boolean',
        default: false,
        describe: 'End the run as soon as a --threshold fails for good (judged each second)',
      })
      .option('delay-abort-eval', {
        type: 'string',
        describe: 'With --abort-on-fail: how long the workload runs before thresholds are judged, e.g. 10s',
      })
      .option('baseline', {
        type: 'string',
        describe: 'Compare with this earlier result.json; exit 1 on a significant regression',
      })
      .option('max-regression', { type: 'string', describe: MAX_REGRESSION_DESCRIPTION })
      .option('junit', {
        type: 'string',
        describe: 'Write JUnit XML: a testcase per threshold and per check',
      })
      .option('summary-md', {
        type: 'string',
        describe: 'Write a markdown summary (also appended to $GITHUB_STEP_SUMMARY when set)',
      })
      .option('quota-store', {
        type: 'string',
        describe:
          "redis://HOST:PORT, or redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER for a Sentinel-watched master: share the key's pacing and 429 pauses with every generator naming the same store (other machines, shards). A store that goes away is waited for, never sent around (see --store-outage)",
      })
      .option('store-outage', {
        choices: ['wait', 'local-share'] as const,
        default: 'wait' as const,
        describe:
          'While the --quota-store is away: wait for it (nothing is sent without a reservation), or local-share: each generator paces alone at its share of the plan (1/N of --shard I/N and --workers), told to the store when it is back',
      })
      .option('workers', {
        type: 'number',
        default: 1,
        describe:
          "Worker threads sharing the workload (one core each); the key's quota stays one, their results are merged",
      })
      .option('tenants', {
        type: 'string',
        describe:
          "CSV or JSON file of a tenant mix's keys on your target (plan,key[,name]; a key may be env:VAR): each key paced by its own plan; never printed or written. Without it, a scenario's `tenants` run on the embedded server's minted keys",
      })
      .option('shard', {
        type: 'string',
        describe:
          "I/N: run part I of N of the workload (rates divided, VUs and iterations split); 'merge' joins the parts",
      })
      .requiresArg([
        'quota-store',
        'store-outage',
        'shard',
        'workers',
        'base-url',
        'api-key',
        'plan',
        'plans',
        'time-scale',
        'duration',
        'rate',
        'vus',
        'iterations',
        'out',
        'checkpoint',
        'spec',
        'timeout',
        'max-attempts',
        'seed',
        'threshold',
        'delay-abort-eval',
        'baseline',
        'max-regression',
        'junit',
        'summary-md',
        'tenants',
      ])
      .conflicts('rate', 'vus'),
  );
}

type RunArgs = Awaited<ReturnType<typeof runOptions>['argv']>;

/**
 * The run's tenant mix, if any: the scenario's groups with keys the embedded server mints (from a
 * random seed it gets through its environment), or a `--tenants` file's keys for a target of one's own.
 */
function tenantMixOf(
  scenario: Scenario<unknown>,
  file: string | undefined,
  plans: PlanTable,
  timeScale: number,
  embedded: boolean,
): { mix: TenantMix; minted?: { seed: string; flag: string } } | undefined {
  if (file === undefined && scenario.tenants === undefined) return undefined;
  const windowsOf = (plan: string) => scalePlan(getPlan(plans, plan), timeScale).windows;
  const declared =
    scenario.tenants === undefined
      ? []
      : validateTenantSpecs(scenario.tenants, plans, `scenario ${scenario.name}: tenants`);
  if (file !== undefined) {
    if (embedded)
      throw new InputError(
        "--tenants names keys of your own target: give --base-url too (the embedded server mints its own for a scenario's tenants)",
      );
    const text = readTextFile(file, '--tenants');
    const { specs, keyFor } = specsFromKeys(
      parseTenantsFile(text, `--tenants ${file}`),
      plans,
      declared,
      `--tenants ${file}`,
    );
    return { mix: buildTenantMix(specs, windowsOf, keyFor) };
  }
  if (!embedded)
    throw new InputError(
      `scenario ${scenario.name} declares tenants: against --base-url give their keys with --tenants FILE (plan,key[,name])`,
    );
  const seed = randomBytes(16).toString('hex');
  const counts = keysPerPlan(declared);
  const flag = Object.entries(counts)
    .map(([plan, n]) => `${plan}=${n}`)
    .join(',');
  return {
    mix: buildTenantMix(declared, windowsOf, (plan, n) => mintedKey(seed, plan, n)),
    minted: { seed, flag },
  };
}

/** A mix as worker threads take it: plain data, the keys in tenant order (in memory only). */
function tenantJob(mix: TenantMix): NonNullable<WorkerJob['tenants']> {
  const windowsByPlan: Record<string, RateWindow[]> = {};
  for (const t of mix.tenants) windowsByPlan[t.tenant.plan] ??= [...t.tenant.windows];
  return { specs: mix.groups.map((g) => g.spec), keys: mix.tenants.map((t) => t.key), windowsByPlan };
}

function readTextFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(
      `${what} ${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** Base URL without credentials: what a result and a message may show. */
function publicTarget(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
}

function parseRateFlag(text: string): Rate {
  if (/^\d+(\.\d+)?%$/.test(text)) return text as Rate;
  const rate = Number(text);
  if (text.trim() === '' || !Number.isFinite(rate) || rate < 0) {
    throw new InputError(
      `--rate: '${text}' is not a rate (iterations per second, or a share of the plan like 80%)`,
    );
  }
  return rate;
}

export async function run(args: RunArgs): Promise<number> {
  const scenario = await loadScenario(args.scenario as string);
  const spec = withAuthHeaderFlag(await loadSpec(args.spec ?? DEFAULT_SPEC_PATH), args.authHeader);
  const plans = args.plans
    ? applyPlanOverrides(DEFAULT_PLANS, readJsonFile(args.plans, '--plans'), `--plans ${args.plans}`)
    : DEFAULT_PLANS;
  const thresholds = collectThresholds(
    scenario,
    args.threshold ?? [],
    new Set(spec.operations.map((op) => op.id)),
    args.abortOnFail,
    args.delayAbortEval === undefined ? 0 : parseDuration(args.delayAbortEval, '--delay-abort-eval'),
  );
  if (args.baseline) {
    // A missing or foreign baseline, or a malformed tolerance, is found before any traffic.
    parseTolerances(args.maxRegression);
    resultFromJson(readJsonFile(args.baseline, '--baseline'), `--baseline ${args.baseline}`);
  } else if (args.maxRegression) {
    throw new InputError('--max-regression needs --baseline FILE');
  }
  const planName = args.plan ?? scenario.plan ?? 'free';
  const plan = getPlan(plans, planName);
  const embedded = args.baseUrl === undefined;
  const timeScale = args.timeScale ?? (embedded ? EMBEDDED_TIME_SCALE : 1);
  if (!(timeScale > 0)) throw new InputError('--time-scale must be a positive number');
  const windows = scalePlan(plan, timeScale).windows;
  const enforce = args.enforce ? args.enforce === 'on' : (scenario.enforce ?? true);
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  const limiter = args.limiter === undefined ? undefined : parseLimiter(args.limiter, '--limiter');
  const checkpointMs = parseCheckpointInterval(args.checkpoint);
  if (args.maxAttempts < 1 || !Number.isInteger(args.maxAttempts))
    throw new InputError('--max-attempts must be a whole number >= 1');
  const shard = args.shard === undefined ? undefined : parseShare(args.shard, '--shard');
  const quotaStoreUrl = args.quotaStore === undefined ? undefined : parseQuotaStoreUrl(args.quotaStore);
  if (args.storeOutage === 'local-share' && !quotaStoreUrl)
    throw new InputError(
      '--store-outage local-share needs --quota-store: without a store there is no outage',
    );
  const overrides = {
    durationMs: args.duration === undefined ? undefined : parseDuration(args.duration, '--duration'),
    rate: args.rate === undefined ? undefined : parseRateFlag(args.rate),
    vus: args.vus,
    iterations: args.iterations,
  };
  const whole = resolveWorkload(scenario.workload, planRate(windows), overrides);
  const workers = args.workers;
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new InputError('--workers must be a whole number from 1 to 64');
  if (workers > 1 && args.abortOnFail)
    throw new InputError(
      '--abort-on-fail needs the live figures of one generator; it cannot be used with --workers',
    );
  const metricsSetup = metricsFlags(args);
  const tenantSetup = tenantMixOf(scenario, args.tenants, plans, timeScale, embedded);
  // Every group's rate is resolved (and refused) before the server starts or a key is used.
  const tenants = tenantSetup && {
    mix: tenantSetup.mix,
    loads: tenantLoads(tenantSetup.mix, scenario.workload, overrides, whole.kind, shard),
  };
  if (tenantSetup) refuseRatesInClosedModel(tenantSetup.mix, whole.kind);
  // A tenant mix is spread by its keys (tenantLoads), not by dividing the rates.
  const workload = tenantSetup ? shareOfCounts(whole, shard) : shard ? shareOf(whole, shard) : whole;
  if (shard && shard.count > 1 && !quotaStoreUrl && !tenantSetup && !args.quiet)
    process.stderr.write(
      'petstore-load: --shard without --quota-store: this shard paces the whole plan on its own; shards sharing one key will exceed it together\n',
    );

  let server: ServerProcess | undefined;
  let baseUrl: URL;
  let apiKey = args.apiKey ?? process.env.PETSTORE_API_KEY;
  apiKey ??= embedded ? demoKeyFor(planName) : undefined;
  if (embedded && apiKey === undefined) {
    throw new InputError(
      `plan '${planName}': the embedded server has demo keys for free, pro, business and enterprise only; pace for one of them, or give --base-url and --api-key`,
    );
  }
  const seed = args.seed ?? Math.floor(Math.random() * 2 ** 32);
  if (!Number.isInteger(seed) || seed < 0) throw new InputError('--seed must be a whole number >= 0');
  if (embedded) {
    const serverArgs = ['--time-scale', String(timeScale)];
    if (args.plans) serverArgs.push('--plans', args.plans);
    if (tenantSetup?.minted) serverArgs.push('--tenant-keys', tenantSetup.minted.flag);
    // The minting seed goes through the environment: no key, and nothing to derive one, on a command line.
    server = await spawnServer(
      serverArgs,
      tenantSetup?.minted ? { [TENANT_SEED_ENV]: tenantSetup.minted.seed } : undefined,
    );
    process.once('exit', () => server?.child.kill());
    baseUrl = new URL(server.url);
  } else {
    try {
      baseUrl = new URL(args.baseUrl as string);
    } catch {
      throw new InputError(`--base-url: '${args.baseUrl}' is not a URL`);
    }
    if (!/^https?:$/.test(baseUrl.protocol)) throw new InputError('--base-url must be http:// or https://');
    if (!(await reachable(baseUrl)))
      throw new InputError(`target ${publicTarget(baseUrl)} is unreachable`, EXIT.UNREACHABLE);
  }

  // Every generator of the key paces at its part of the plan while the store is away: one per shard and worker.
  const localShare = args.storeOutage === 'local-share' ? (shard?.count ?? 1) * workers : undefined;
  let sharedQuota: (SharedQuota & { label: string }) | undefined;
  if (quotaStoreUrl) {
    try {
      const store = await RedisQuotaStore.connect(quotaStoreUrl.url);
      sharedQuota = {
        store,
        key: quotaKeyName(apiKey ?? 'anonymous'),
        label: quotaStoreUrl.label,
        ...(localShare ? { localShare } : {}),
      };
    } catch (error) {
      await server?.stop();
      throw new InputError(
        `--quota-store ${quotaStoreUrl.label}: cannot connect (${(error as Error).message})`,
        EXIT.UNREACHABLE,
      );
    }
  }

  // The run's identity on every series: never a key (the target is shown without credentials).
  const metrics =
    metricsSetup &&
    new LiveMetrics({
      ...metricsSetup,
      identity: {
        scenario: scenario.name,
        target: publicTarget(baseUrl),
        plan: planName,
      },
      windows,
    });
  const interrupt = new Interrupt();
  const outputs: OutputOptions = {
    scenario: scenario.name,
    out: args.out,
    junit: args.junit,
    summaryMd: args.summaryMd,
  };
  // The result as it stands, once the run starts: `ask` for a checkpoint, `now` for a second Ctrl-C,
  // which exits at once (worker threads are asked for their parts and waited for a second at most).
  let soFar: { now(): RunResult | undefined; ask(): RunResult | Promise<RunResult | undefined> } | undefined;
  const checkpoints = new Checkpoints({
    intervalMs: checkpointMs,
    take: () => soFar?.ask(),
    // The first write fixes the output directory: the final result goes beside its checkpoint.
    dirOf: (result) => {
      outputs.out = resultDir(result, outputs);
      return outputs.out;
    },
  });
  interrupt.onForce(() => {
    const result = soFar?.now();
    if (!result) return;
    const { path } = writeRunOutputs(result, outputs);
    checkpoints.finish(path && dirname(path));
    if (path) process.stderr.write(`petstore-load: interrupted again: the result so far is in ${path}\n`);
  });

  const progress = new ProgressLine();
  const live = !args.quiet && progress.enabled;
  const abortable = thresholds.filter((t) => t.abortOnFail);
  let abortedBy: ThresholdResult | undefined;
  const onTick = (tick: RunTick) => {
    if (live) progress.update(tick);
    if (abortedBy || interrupt.aborted) return;
    const due = abortable.filter((t) => tick.elapsedMs >= t.delayAbortEvalMs);
    if (due.length === 0) return;
    const soFar = tick.snapshot();
    for (const t of due) {
      const verdict = evaluateThreshold(t, soFar);
      if (!failsForGood(t, verdict, soFar)) continue;
      abortedBy = { ...verdict, aborted: true };
      interrupt.abort(`threshold ${t.expression}`);
      return;
    }
  };
  try {
    let result: RunResult;
    let setupFailure: string | undefined;
    try {
      // What one generator and each worker thread alike are told.
      const common = {
        baseUrl: baseUrl.href,
        target: publicTarget(baseUrl),
        embeddedTarget: embedded,
        apiKey,
        plan: planName,
        windows,
        timeScale,
        enforce,
        allowBanRisk: args.allowBanRisk,
        limiter: limiter?.kind,
        maxInFlight: limiter?.maxInFlight,
        contract: args.contract,
        timeoutMs,
        maxAttempts: args.maxAttempts,
        spec: args.spec ?? 'petstore.openapi.yaml (built in)',
        seed,
        shard,
      };
      result =
        workers > 1
          ? await runWorkers({
              count: workers,
              signal: interrupt.signal,
              interruptedBy: () => interrupt.by,
              onSnapshots: (threads) => {
                soFar = { now: () => threads.askNow(1000), ask: () => threads.ask(5000) };
              },
              onWorkload: () => checkpoints.start(),
              job: {
                ...common,
                scenarioPath: args.scenario as string,
                specPath: args.spec ?? DEFAULT_SPEC_PATH,
                authHeader: args.authHeader,
                overrides,
                planRate: planRate(windows),
                ...(tenantSetup ? { tenants: tenantJob(tenantSetup.mix) } : {}),
                quota: quotaStoreUrl
                  ? {
                      kind: 'redis',
                      ...quotaStoreUrl,
                      key: quotaKeyName(apiKey ?? 'anonymous'),
                      ...(localShare ? { localShare } : {}),
                    }
                  : { kind: 'port', key: 'run' },
              },
            })
          : await executeScenario({
              ...common,
              scenario,
              workload,
              operations: spec.operations,
              signal: interrupt.signal,
              interruptedBy: () => interrupt.by,
              onTick,
              sharedQuota,
              onSnapshot: (take) => {
                soFar = { now: take, ask: take };
              },
              // Checkpoints count from the workload's start: setup has nothing worth keeping yet.
              onWorkload: (running) => {
                if (running) checkpoints.start();
              },
              ...(tenants ? { tenants } : {}),
              ...(metrics ? { onLive: (live) => metrics.start(live) } : {}),
            });
    } catch (error) {
      if (!(error instanceof SetupError)) throw error;
      setupFailure = `scenario ${scenario.name}: ${error.message}`;
      // Setup's requests were measured: with them, the run's outputs are written as for any run.
      if (!error.result) {
        const unreachable = !embedded && !(await reachable(baseUrl));
        throw new InputError(setupFailure, unreachable ? EXIT.UNREACHABLE : EXIT.USAGE);
      }
      result = error.result;
    }
    progress.clear();
    // Before the result is written: the last push carries the final counters, whatever is then written.
    await stopMetrics(metrics, { interrupted: interrupt.aborted, quiet: args.quiet });
    if (metrics) result.meta.runId = metrics.runId;
    await checkpoints.stop();
    return finishRun(result, { args, thresholds, abortedBy, scenario, setupFailure, outputs, checkpoints });
  } finally {
    await checkpoints.stop();
    progress.clear();
    await stopMetrics(metrics, { interrupted: true, quiet: args.quiet });
    interrupt.release();
    await server?.stop();
    await sharedQuota?.store.close();
  }
}

/**
 * After the traffic: the verdicts (thresholds, probes, baseline) joined to the result, every output
 * written, the summary printed, and the exit code, with a line on stderr saying why when it fails.
 */
function finishRun(
  result: RunResult,
  o: {
    args: RunArgs;
    thresholds: ReturnType<typeof collectThresholds>;
    abortedBy: ThresholdResult | undefined;
    scenario: Awaited<ReturnType<typeof loadScenario>>;
    setupFailure: string | undefined;
    outputs: OutputOptions;
    checkpoints: Checkpoints;
  },
): number {
  const { args, abortedBy } = o;
  if (o.thresholds.length > 0 && !o.setupFailure) {
    // The threshold that ended the run keeps the verdict it had then: the figures at the end
    // cover less than the run was meant to, and may read better than what stopped it.
    result.thresholds = evaluateThresholds(o.thresholds, result).map((v) =>
      abortedBy && v.expression === abortedBy.expression && v.source === abortedBy.source ? abortedBy : v,
    );
  }
  const probes = probeResultsOf(o.scenario);
  if (probes) result.probes = probes;
  let comparison: string | undefined;
  if (args.baseline && !o.setupFailure) {
    // Judged before anything is written, so that result.json, JUnit, the summaries and the report
    // all carry the regressions; the baseline was checked before the run, so this does not fail on it.
    const judged = compareWithBaseline(args.baseline, result, args.maxRegression);
    comparison = judged.text;
    result.baseline = baselineVerdict(args.baseline, judged.comparison);
  }
  const { path, written, failed } = writeRunOutputs(result, o.outputs);
  o.checkpoints.finish(path && dirname(path));
  const exitCode = runExitCode(result, {
    interrupted: result.meta.partial && !abortedBy && !o.setupFailure,
    setupFailed: o.setupFailure !== undefined,
    writeFailed: failed,
  });
  if (!args.quiet)
    console.log([formatSummary(result, path), ...written, comparison ?? ''].join('\n').trimEnd());
  else if (path) console.log(path);
  // Quiet or not, a failing exit says why on stderr, where a CI log shows it.
  const never = neverAnsweredLine(result) ?? storeLostLine(result);
  const why =
    exitCode === EXIT.UNREACHABLE
      ? [never, o.setupFailure].filter(Boolean).join('; ')
      : exitCode === EXIT.USAGE && o.setupFailure
        ? o.setupFailure
        : exitCode === EXIT.THRESHOLDS_FAILED
          ? failureLine(result)
          : undefined;
  if (why) process.stderr.write(`petstore-load: ${why}\n`);
  return exitCode;
}
