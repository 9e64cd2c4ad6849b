import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, InferredOptionTypes } from 'yargs';
import { type AuthPlacement, parseAuthHeader, type ResolvedAuth, withAuthHeaderFlag } from '../api/auth.ts';
import { DEFAULTS } from '../api/defaults.ts';
import { demoKeyFor } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { type LimiterGiven, parseLimiter } from '../api/limiter-kinds.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  type RateWindow,
  scalePlan,
} from '../api/plans.ts';
import type { StoreAddress } from '../api/redis.ts';
import { DEFAULT_SPEC_PATH, type LoadedSpec, loadSpec } from '../api/spec.ts';
import {
  buildTenantMix,
  keysPerPlan,
  mintedKey,
  parseTenantsFile,
  specsFromKeys,
  type TenantMix,
  validateTenantSpecs,
} from '../api/tenants.ts';
import type { FleetConfig } from '../fleet/join.ts';
import type { SinkSpec } from '../metrics/sinks.ts';
import type { Contract } from '../record/checks/contract.ts';
import { parseTolerances } from '../report/tolerances.ts';
import type { RunResult } from '../result/types.ts';
import type { Rate, Scenario } from '../scenario/define.ts';
import { loadScenario } from '../scenario/load.ts';
import { parseShare, type Share, shareOf, shareOfCounts } from '../scenario/share.ts';
import { refuseRatesInClosedModel, type TenantLoad, tenantLoads } from '../scenario/tenant-load.ts';
import { type ResolvedWorkload, resolveWorkload, type WorkloadOverrides } from '../scenario/workload.ts';
import { parseBaseUrl } from './base-url.ts';
import { parseCheckpointInterval } from './checkpoint.ts';
import { resolveFleet } from './fleet-flags.ts';
import { metricsFlags } from './metrics-flags.ts';
import { type NetworkConfig, networkFlags } from './network-flags.ts';
import { parseQuotaStoreUrl } from './quota-store-url.ts';
import { readJsonFile } from './read-json-file.ts';
import { parseRefusalStatuses } from './refusal-flags.ts';
import type { RUN_FLAGS } from './run-flags.ts';
import { Secret } from './secret.ts';
import { readTextFile } from './tenants-file.ts';
import { collectThresholds } from './thresholds.ts';

/** What yargs hands `run`: RUN_FLAGS parsed, and the scenario positional. */
export type RunArgs = ArgumentsCamelCase<InferredOptionTypes<typeof RUN_FLAGS>> & { scenario?: string };

/** A tenant mix as resolved: its keys minted by the embedded server (from `minted.seed`) or read from `--tenants`. */
export interface RunTenants {
  readonly mix: TenantMix;
  readonly loads: TenantLoad[];
  /** The embedded server's minting: the seed (never printed) and its `--tenant-keys` flag. */
  readonly minted?: { seed: string; flag: string };
  /** The `--tenants` file the keys came from. */
  readonly file?: string;
}

/** Everything `run` does, decided before anything starts: flags, environment, scenario and files in. */
export interface RunConfig {
  readonly printConfig: boolean;
  readonly scenarioPath: string;
  readonly scenario: Scenario<unknown>;
  readonly specPath: string;
  /** How the result names the document. */
  readonly specLabel: string;
  readonly spec: LoadedSpec;
  readonly plansFile: string | undefined;
  readonly plans: PlanTable;
  readonly thresholds: ReturnType<typeof collectThresholds>;
  /** `--baseline`, read and parsed once: the run is judged against `result`. */
  readonly baseline: { file: string; maxRegression: string | undefined; result: RunResult } | undefined;
  readonly planName: string;
  /** The plan's windows after the time scale: what the target counts. */
  readonly windows: RateWindow[];
  readonly planRate: number;
  readonly embedded: boolean;
  /** The target given with `--base-url`; the embedded server's is known once it starts. */
  readonly baseUrl: URL | undefined;
  readonly timeScale: number;
  readonly enforce: boolean;
  readonly allowBanRisk: boolean;
  readonly contract: Contract;
  readonly timeoutMs: number;
  readonly limiter: LimiterGiven | undefined;
  readonly checkpointMs: number;
  readonly maxAttempts: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  readonly refusalStatuses: number[];
  readonly shard: Share | undefined;
  readonly quotaStore: StoreAddress | undefined;
  /** `--fleet`: the generators this one runs with as one run (its index claimed at start when unknown). */
  readonly fleet: FleetConfig | undefined;
  readonly storeOutage: 'wait' | 'local-share';
  /** Every generator of the key paces at its part of the plan while the store is away. */
  readonly localShare: number | undefined;
  readonly overrides: WorkloadOverrides;
  /** This generator's part of the workload (of its shard, if any). */
  readonly workload: ResolvedWorkload;
  readonly workers: number;
  readonly metrics: { sinks: SinkSpec[]; intervalMs: number } | undefined;
  readonly tenants: RunTenants | undefined;
  readonly seed: number;
  /** Whether `--seed` gave it: a drawn seed is new on every run, so a printed one would not repeat it. */
  readonly seedGiven: boolean;
  readonly apiKey: Secret | undefined;
  /** `--auth-header`, parsed: the key's placement for every operation. */
  readonly authHeader: AuthPlacement | undefined;
  /** Where the key goes, per operation id. */
  readonly auth: Map<string, ResolvedAuth>;
  readonly outputs: { out: string | undefined; junit: string | undefined; summaryMd: string | undefined };
  readonly quiet: boolean;
  /** TLS, HTTP/2 and the proxy of the target's connections. */
  readonly network: NetworkConfig;
  /** Said on stderr before the run starts. */
  readonly warnings: readonly string[];
}

const UNSHARED_SHARD =
  '--shard without --quota-store: this shard paces the whole plan on its own; shards sharing one key will exceed it together';

/**
 * `run`'s configuration: every default and every refusal of its flags, in the order they were always
 * checked, before a server starts or a request is sent. Reads the scenario, the document and the
 * files the flags name; starts and sends nothing.
 */
export async function resolveRunConfig(
  args: RunArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunConfig> {
  const scenarioPath = args.scenario ?? 'mixed-traffic';
  const loadedThrough: string[] = [];
  const scenario = await loadScenario(scenarioPath, (note) => loadedThrough.push(note));
  // Each operation's `auth` says where the key goes: its security scheme, or --auth-header over all.
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
  const baseline = await resolveBaseline(args);
  const planName = args.plan ?? scenario.plan ?? 'free';
  const plan = getPlan(plans, planName);
  const embedded = args.baseUrl === undefined;
  const timeScale = args.timeScale ?? (embedded ? DEFAULTS.embeddedTimeScale : 1);
  if (!(timeScale > 0)) throw new InputError('--time-scale must be a positive number');
  const windows = scalePlan(plan, timeScale).windows;
  const enforce = args.enforce ? args.enforce === 'on' : (scenario.enforce ?? true);
  const given = resolveSending(args);
  const fleet = resolveFleet(args, env, given.quotaStore, given.shard, args.baseUrl === undefined);
  // A fleet's index known already (--shard, the Job's index) is its shard; else claimed at start.
  const sending = fleet?.index ? { ...given, shard: { index: fleet.index, count: fleet.generators } } : given;
  const { shard, quotaStore } = sending;
  const load = resolveLoad(args, scenario, plans, windows, timeScale, embedded, shard);
  const unshared = Boolean(shard && shard.count > 1 && !quotaStore && !load.tenants);
  const baseUrl = embedded ? undefined : parseBaseUrl(args.baseUrl as string);
  const network = networkFlags(args, baseUrl, env);
  const warnings = args.quiet
    ? []
    : [...loadedThrough, ...(unshared ? [UNSHARED_SHARD] : []), ...network.warnings];
  const apiKey = resolveKey(args, env, embedded, planName);
  const seed = args.seed ?? Math.floor(Math.random() * 2 ** 32);
  if (!Number.isInteger(seed) || seed < 0) throw new InputError('--seed must be a whole number >= 0');
  const authHeader = args.authHeader === undefined ? undefined : parseAuthHeader(args.authHeader);
  return Object.freeze({
    printConfig: args.printConfig,
    scenarioPath,
    scenario,
    specPath: args.spec ?? DEFAULT_SPEC_PATH,
    specLabel: args.spec ?? 'petstore.openapi.yaml (built in)',
    spec,
    plansFile: args.plans,
    plans,
    thresholds,
    baseline,
    planName,
    windows,
    planRate: planRate(windows),
    embedded,
    baseUrl,
    timeScale,
    enforce,
    allowBanRisk: args.allowBanRisk,
    contract: resolveContract(args),
    ...sending,
    fleet,
    storeOutage: args.storeOutage,
    localShare: args.storeOutage === 'local-share' ? (shard?.count ?? 1) * args.workers : undefined,
    ...load,
    seed,
    seedGiven: args.seed !== undefined,
    apiKey,
    authHeader,
    auth: new Map(spec.operations.map((op) => [op.id, op.auth])),
    outputs: { out: args.out, junit: args.junit, summaryMd: args.summaryMd },
    quiet: args.quiet,
    network,
    warnings,
  });
}

/**
 * The contract the rate-limit checks judge by: `--contract` when given; else, with a document of the
 * user's own, what it declares (a target's document is its contract, not the seed's); else the seed's,
 * as ever. Our own document named with `--spec` is still ours: the seed's contract, which it declares.
 */
export function resolveContract(args: Pick<RunArgs, 'contract' | 'spec'>): Contract {
  if (args.contract !== undefined) return args.contract;
  if (args.spec === undefined || resolve(args.spec) === DEFAULT_SPEC_PATH) return 'seed';
  return 'document';
}

/** How requests are sent and shared: timeout, limiter, checkpoints, attempts, shard and quota store. */
function resolveSending(
  args: RunArgs,
): Pick<
  RunConfig,
  'timeoutMs' | 'limiter' | 'checkpointMs' | 'maxAttempts' | 'refusalStatuses' | 'shard' | 'quotaStore'
> {
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  const limiter = args.limiter === undefined ? undefined : parseLimiter(args.limiter, '--limiter');
  const checkpointMs = parseCheckpointInterval(args.checkpoint);
  if (args.maxAttempts < 1 || !Number.isInteger(args.maxAttempts))
    throw new InputError('--max-attempts must be a whole number >= 1');
  const shard = args.shard === undefined ? undefined : parseShare(args.shard, '--shard');
  const quotaStore = args.quotaStore === undefined ? undefined : parseQuotaStoreUrl(args.quotaStore);
  if (args.storeOutage === 'local-share' && !quotaStore)
    throw new InputError(
      '--store-outage local-share needs --quota-store: without a store there is no outage',
    );
  const refusalStatuses = parseRefusalStatuses(args.refusalStatus);
  return {
    timeoutMs,
    limiter,
    checkpointMs,
    maxAttempts: args.maxAttempts,
    refusalStatuses,
    shard,
    quotaStore,
  };
}

/** A missing or foreign baseline, or a malformed tolerance, is found before any traffic. */
async function resolveBaseline(args: RunArgs): Promise<RunConfig['baseline']> {
  if (args.baseline) {
    parseTolerances(args.maxRegression);
    // Reading a result (ajv, its schema, the histograms' decoder) costs a start only with --baseline.
    const { resultFromJson } = await import('../report/result-input.ts');
    const result = resultFromJson(readJsonFile(args.baseline, '--baseline'), `--baseline ${args.baseline}`);
    return { file: args.baseline, maxRegression: args.maxRegression, result };
  }
  if (args.maxRegression) throw new InputError('--max-regression needs --baseline FILE');
  return undefined;
}

/** The workload (whole, then this shard's part), the workers, the metrics and the tenant mix. */
function resolveLoad(
  args: RunArgs,
  scenario: Scenario<unknown>,
  plans: PlanTable,
  windows: RateWindow[],
  timeScale: number,
  embedded: boolean,
  shard: Share | undefined,
): Pick<RunConfig, 'overrides' | 'workload' | 'workers' | 'metrics' | 'tenants'> {
  const overrides: WorkloadOverrides = {
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
  const metrics = metricsFlags(args);
  const mix = tenantMixOf(scenario, args.tenants, plans, timeScale, embedded);
  // Every group's rate is resolved (and refused) before the server starts or a key is used.
  const tenants: RunTenants | undefined = mix && {
    ...mix,
    loads: tenantLoads(mix.mix, scenario.workload, overrides, whole.kind, shard),
  };
  if (mix) refuseRatesInClosedModel(mix.mix, whole.kind);
  // A tenant mix is spread by its keys (tenantLoads), not by dividing the rates.
  const workload = mix ? shareOfCounts(whole, shard) : shard ? shareOf(whole, shard) : whole;
  return { overrides, workload, workers, metrics, tenants };
}

/** The key and where it came from: `--api-key`, PETSTORE_API_KEY, or the embedded server's demo key. */
function resolveKey(
  args: RunArgs,
  env: NodeJS.ProcessEnv,
  embedded: boolean,
  planName: string,
): Secret | undefined {
  if (args.apiKey !== undefined) return new Secret(args.apiKey, '--api-key');
  if (env.PETSTORE_API_KEY !== undefined) return new Secret(env.PETSTORE_API_KEY, 'PETSTORE_API_KEY');
  const demo = embedded ? demoKeyFor(planName) : undefined;
  if (demo !== undefined) return new Secret(demo, `the embedded server's demo key for ${planName}`);
  if (embedded)
    throw new InputError(
      `plan '${planName}': the embedded server has demo keys for free, pro, business and enterprise only; pace for one of them, or give --base-url and --api-key`,
    );
  return undefined;
}

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
): Omit<RunTenants, 'loads'> | undefined {
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
    return { mix: buildTenantMix(specs, windowsOf, keyFor), file };
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
