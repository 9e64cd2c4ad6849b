import { type AuthPlacement, parseAuthHeader, type ResolvedAuth, withAuthOverride } from '../api/auth.ts';
import { DEFAULTS } from '../api/defaults.ts';
import { demoKeyFor } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type { Operation } from '../api/operations.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type Plan,
  type PlanTable,
  planRate,
  scalePlan,
} from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, type LoadedSpec, loadSpec } from '../api/spec.ts';
import { MAX_TENANT_KEYS } from '../api/tenants.ts';
import { dailyWindow } from '../capacity/measure/daily.ts';
import { defaultMaxWaitMs } from '../capacity/measure/max-wait.ts';
import type { ProbedOperation } from '../capacity/probed-operation.ts';
import { parseTenantMix } from '../capacity/tenants/tenant-ramp.ts';
import {
  parseTenantCapacityThreshold,
  type TenantCapacityThreshold,
} from '../capacity/tenants/tenant-thresholds.ts';
import type { SinkSpec } from '../metrics/sinks.ts';
import { BAN_METRICS, parseThreshold, type Threshold } from '../report/threshold-parse.ts';
import { parseBaseUrl } from './base-url.ts';
import { CAPACITY_DEFAULTS, type CapacityArgs } from './capacity-flags.ts';
import { resolveProbe } from './capacity-operation.ts';
import { metricsFlags } from './metrics-flags.ts';
import { type NetworkConfig, networkFlags } from './network-flags.ts';
import { readJsonFile } from './read-json-file.ts';
import { parseRefusalStatuses } from './refusal-flags.ts';
import { Secret } from './secret.ts';
import { type TenantFileKeys, tenantFileKeys } from './tenants-file.ts';

/** The embedded server's ban for --probe-ban, unscaled (its documented default), passed explicitly so that it can be said up front. */
export const EMBEDDED_BAN_DURATION = '10m';
const BUILT_IN_SPEC = 'petstore.openapi.yaml (built in)';

/** One key probed: its plan, the key, and the time scale of the server it is probed on. */
export interface ProbedKey {
  plan: Plan;
  key: Secret;
  timeScale: number;
  /** `--max-wait`, or the plan's default at its time scale. */
  maxWaitMs: number;
}

/** What both kinds of `capacity` share. */
interface CapacityCommon {
  /** The plan table, with `--plans` applied; the file itself is passed on to an embedded server. */
  plans: PlanTable;
  plansFile: string | undefined;
  /** `--base-url`, checked; undefined: the reference server is started. */
  baseUrl: URL | undefined;
  timeoutMs: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses: number[];
  /** Where the key goes, per operation of the built-in document (`--auth-header` over all). */
  auth: Map<string, ResolvedAuth>;
  /** `--auth-header` as parsed: the placement the probe clients are to use, when given. */
  authHeader: AuthPlacement | undefined;
  operations: Operation[];
  spec: string;
  metrics: { sinks: SinkSpec[]; intervalMs: number } | undefined;
  /** TLS, HTTP/2 and the proxy of the target's connections. */
  network: NetworkConfig;
  out: string | undefined;
  quiet: boolean;
  printConfig: boolean;
}

/** `capacity`: each plan's key probed for its promise. */
export interface PlanProbeConfig extends CapacityCommon {
  mode: 'plans';
  windows: number;
  daily: boolean;
  maxRate: number;
  /** The scale asked for (embedded default 10, else 1); a fast plan may get a slower server, in `keys`. */
  timeScale: number;
  keys: ProbedKey[];
  ban: (ProbedKey & { maxWaitMs: number; banMaxWait: string }) | undefined;
  thresholds: Threshold[];
  /** The request every probe sends: the pet store's page of one pet, or `--spec`'s operation. */
  probe: ProbedOperation;
}

/** `capacity --tenants`: tenants ramped until a step breaks. */
export interface TenantRampConfig extends CapacityCommon {
  mode: 'tenants';
  mix: Record<string, number>;
  timeScale: number;
  stepMs: number;
  maxTenants: number;
  start: number;
  /** `--tenants-file`, as named. */
  tenantsFile: string | undefined;
  /** Its keys, read and checked (printed as where they came from); undefined: the embedded server mints them. */
  tenantKeys: TenantFileKeys | undefined;
  stepThresholdTexts: string[];
  stepThresholds: Threshold[];
  verdicts: TenantCapacityThreshold[];
}

export type CapacityConfig = PlanProbeConfig | TenantRampConfig;

/** Flags of the tenant ramp, refused without --tenants. */
const TENANT_ONLY_FLAGS = [
  ['tenantThreshold', '--tenant-threshold'],
  ['stepDuration', '--step-duration'],
  ['maxTenants', '--max-tenants'],
  ['tenantsStart', '--tenants-start'],
  ['tenantsFile', '--tenants-file'],
] as const;

/** Flags of the plan probes, refused with --tenants. */
const PROBE_ONLY_FLAGS = [
  ['apiKey', '--api-key'],
  ['daily', '--daily'],
  ['probeBan', '--probe-ban'],
  ['banKey', '--ban-key'],
  ['maxWait', '--max-wait'],
] as const;

/** Flags of one operation of the user's own document, refused with --tenants. */
const OPERATION_FLAGS = [
  ['spec', '--spec'],
  ['operation', '--operation'],
  ['param', '--param'],
] as const;

/**
 * `capacity`'s flags resolved into one checked configuration: every default and every refusal,
 * before a server starts or a request leaves. Reads `--plans` and the document (`--spec`, else the
 * built-in one), and chooses the operation probed (capacity-operation.ts); starts
 * nothing, sends nothing. Capacity's keys come from `--api-key` (or the embedded server's demo keys)
 * and `--tenants-file`, never from the environment.
 */
export async function resolveCapacityConfig(args: CapacityArgs): Promise<CapacityConfig> {
  return args.tenants !== undefined ? resolveTenantRamp(args, args.tenants) : resolvePlanProbe(args);
}

async function resolvePlanProbe(args: CapacityArgs): Promise<PlanProbeConfig> {
  for (const [field, flag] of TENANT_ONLY_FLAGS)
    if (args[field] !== undefined) throw new InputError(`${flag} is a flag of capacity --tenants`);
  if (args.banKey !== undefined && !args.probeBan)
    throw new InputError('--ban-key is only used with --probe-ban');
  const maxWaitMs = parseDuration(args.banMaxWait, '--ban-max-wait');
  // A duration with its unit, as run takes it.
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  if (!Number.isInteger(args.windows) || args.windows < 1 || args.windows > 10)
    throw new InputError('--windows must be a whole number from 1 to 10');
  if (!(args.maxRate > 0)) throw new InputError('--max-rate must be a positive number');
  const plans = plansOf(args);
  const embedded = args.baseUrl === undefined;
  const timeScale = positiveScale(args.timeScale ?? (embedded ? DEFAULTS.embeddedTimeScale : 1));
  // A plan too fast for this machine at the asked scale gets a slower embedded server, unless the scale was given.
  const scaleFor = (plan: Plan) =>
    embedded && args.timeScale === undefined ? feasibleScale(plan, timeScale, args.maxRate) : timeScale;
  const maxWait = args.maxWait === undefined ? undefined : parseDuration(args.maxWait, '--max-wait');
  const probed = (plan: Plan, key: Secret): ProbedKey => {
    const scale = scaleFor(plan);
    return { plan, key, timeScale: scale, maxWaitMs: maxWait ?? defaultMaxWaitMs(scalePlan(plan, scale)) };
  };
  const given = parseKeys(args.apiKey ?? [], plans);
  if (given.size === 0 && !embedded) throw new InputError('--api-key PLAN=KEY is required with --base-url');
  const keys: ProbedKey[] =
    given.size > 0
      ? [...given].map(([name, key]) => probed(getPlan(plans, name), new Secret(key, `--api-key ${name}`)))
      : Object.keys(DEFAULT_PLANS).map((name) =>
          probed(getPlan(plans, name), new Secret(demoKeyFor(name) as string, demoSource(name))),
        );
  const banChoice = args.probeBan ? parseBanKey(args.banKey, embedded, given, plans) : undefined;
  const ban = banChoice && {
    ...probed(banChoice.plan, banChoice.key),
    maxWaitMs,
    banMaxWait: args.banMaxWait,
  };
  if (args.spec !== undefined && embedded)
    throw new InputError(
      '--spec names your own API: give --base-url and --api-key PLAN=KEY too (the embedded server serves the pet store)',
    );
  const metrics = metricsFlags({ ...args, workers: 1 });
  const common = await commonOf(
    args,
    plans,
    timeoutMs,
    metrics,
    await loadSpec(args.spec ?? DEFAULT_SPEC_PATH),
  );
  const probe = resolveProbe(args, common.operations);
  const thresholds = (args.threshold ?? []).map((t) =>
    parseThreshold(t, 'cli', new Set([probe.operation.id])),
  );
  checkThresholdPlans(thresholds, new Set(keys.map((k) => k.plan.name)), ban?.plan.name);
  const baseUrl = targetUrl(args.baseUrl);
  for (const { plan } of keys)
    if (args.daily && !dailyWindow(plan))
      throw new InputError(
        `--daily: plan '${plan.name}' has no window longer than its shortest: no daily quota`,
      );
  return Object.freeze({
    ...common,
    baseUrl,
    network: networkFlags(args, baseUrl, process.env),
    mode: 'plans',
    windows: args.windows,
    daily: args.daily,
    maxRate: args.maxRate,
    timeScale,
    keys,
    ban,
    thresholds,
    probe,
  });
}

async function resolveTenantRamp(args: CapacityArgs, tenants: string): Promise<TenantRampConfig> {
  for (const [field, flag] of PROBE_ONLY_FLAGS)
    if (args[field] !== undefined && args[field] !== false)
      throw new InputError(`${flag} measures one key per plan: it does not go with --tenants`);
  for (const [field, flag] of OPERATION_FLAGS)
    if (args[field] !== undefined)
      throw new InputError(
        `${flag} probes one operation of your own document: --tenants drives the pet store's read operations`,
      );
  const plans = plansOf(args);
  const mix = parseTenantMix(tenants, plans);
  // Real quotas by default, embedded too: a tenant ramp measures the service as its tenants meet it.
  const timeScale = positiveScale(args.timeScale ?? 1);
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  const stepMs = parseDuration(args.stepDuration ?? CAPACITY_DEFAULTS.stepDuration, '--step-duration');
  if (stepMs < 500 || stepMs > 600_000) throw new InputError('--step-duration must be from 500ms to 10m');
  const maxTenants = whole(
    args.maxTenants,
    CAPACITY_DEFAULTS.maxTenants,
    '--max-tenants',
    MAX_TENANT_KEYS / 2,
  );
  const start = whole(args.tenantsStart, 1, '--tenants-start', maxTenants);
  if (args.baseUrl === undefined && args.tenantsFile !== undefined)
    throw new InputError(
      '--tenants-file names keys of your own target: give --base-url too (the embedded server mints its own)',
    );
  if (args.baseUrl !== undefined && args.tenantsFile === undefined)
    throw new InputError(
      "--tenants with --base-url needs --tenants-file FILE (plan,key[,name]) for the tenants' keys",
    );
  const tenantKeys =
    args.tenantsFile === undefined ? undefined : tenantFileKeys(args.tenantsFile, mix, maxTenants, start);
  const spec = await loadSpec(DEFAULT_SPEC_PATH);
  const ops = new Set(spec.operations.map((op) => op.id));
  const stepThresholdTexts = args.tenantThreshold ?? [CAPACITY_DEFAULTS.tenantThreshold];
  const stepThresholds = stepThresholdTexts.map((t) => stepThreshold(t, ops));
  const verdicts = (args.threshold ?? []).map(parseTenantCapacityThreshold);
  const metrics = metricsFlags({ ...args, workers: 1 });
  const common = await commonOf(args, plans, timeoutMs, metrics, spec);
  const baseUrl = targetUrl(args.baseUrl);
  return Object.freeze({
    ...common,
    baseUrl,
    network: networkFlags(args, baseUrl, process.env),
    mode: 'tenants',
    mix,
    timeScale,
    stepMs,
    maxTenants,
    start,
    tenantsFile: args.tenantsFile,
    tenantKeys,
    stepThresholdTexts: [...stepThresholdTexts],
    stepThresholds,
    verdicts,
  });
}

async function commonOf(
  args: CapacityArgs,
  plans: PlanTable,
  timeoutMs: number,
  metrics: CapacityCommon['metrics'],
  spec: LoadedSpec,
): Promise<Omit<CapacityCommon, 'baseUrl' | 'network'>> {
  const authHeader = args.authHeader === undefined ? undefined : parseAuthHeader(args.authHeader);
  return {
    plans,
    plansFile: args.plans,
    timeoutMs,
    refusalStatuses: parseRefusalStatuses(args.refusalStatus),
    auth: new Map(withAuthOverride(spec.operations, authHeader).map((op) => [op.id, op.auth])),
    authHeader,
    operations: withAuthOverride(spec.operations, authHeader),
    spec: args.spec ?? BUILT_IN_SPEC,
    metrics,
    out: args.out,
    quiet: args.quiet,
    printConfig: args.printConfig,
  };
}

/** The largest whole scale, at most `scale`, at which the plan's rate stays within `maxRate`. */
export function feasibleScale(plan: Plan, scale: number, maxRate: number): number {
  const unscaled = planRate(plan.windows);
  if (unscaled * scale <= maxRate * (1 + 1e-9)) return scale;
  return Math.max(1, Math.floor((maxRate / unscaled) * (1 + 1e-9)));
}

function demoSource(plan: string): string {
  return `the embedded server's ${plan} demo key`;
}

function plansOf(args: CapacityArgs): PlanTable {
  return args.plans
    ? applyPlanOverrides(DEFAULT_PLANS, readJsonFile(args.plans, '--plans'), `--plans ${args.plans}`)
    : DEFAULT_PLANS;
}

function positiveScale(scale: number): number {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new InputError('--time-scale must be a positive number');
  return scale;
}

function whole(value: number | undefined, fallback: number, flag: string, most: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > most)
    throw new InputError(`${flag} must be a whole number from 1 to ${most.toLocaleString('en-US')}`);
  return n;
}

function targetUrl(text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  return parseBaseUrl(text);
}

function parseKeys(given: readonly string[], plans: PlanTable, flag = '--api-key'): Map<string, string> {
  const keys = new Map<string, string>();
  for (const text of given) {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1) throw new InputError(`${flag}: ${notPlanKey(text, at, plans)}`);
    keys.set(text.slice(0, at), text.slice(at + 1));
  }
  return keys;
}

/**
 * Why a value is not PLAN=KEY, quoting what was typed where it cannot be a key: a plan's name, or
 * a plan and its `=`. Anything else may be the key itself, and a key is never echoed.
 */
function notPlanKey(text: string, at: number, plans: PlanTable): string {
  if (at === text.length - 1) return `expected PLAN=KEY, got '${text}' (no key after '=')`;
  if (at === 0)
    return "expected PLAN=KEY, got a value starting with '=' (no plan before it; not shown, as it may be a key)";
  if (Object.hasOwn(plans, text)) return `expected PLAN=KEY, got '${text}' (a plan with no '=KEY')`;
  return "expected PLAN=KEY, got a value without '=' (not shown, as it may be a key)";
}

/**
 * The key --probe-ban may get banned. Against a real target the user names it (PLAN=KEY), and it
 * must be none of the keys measured: a banned key would spoil their figures. Against the embedded
 * server a plan is enough (default free): its demo key is banned on a server of its own.
 */
function parseBanKey(
  given: string | undefined,
  embedded: boolean,
  keys: Map<string, string>,
  plans: Readonly<Record<string, Plan>>,
): { plan: Plan; key: Secret } {
  if (given === undefined || !given.includes('=')) {
    if (!embedded)
      throw new InputError(
        '--probe-ban needs --ban-key PLAN=KEY: a key you allow to be banned, none of the --api-key keys',
      );
    const plan = getPlan(plans, given ?? 'free');
    return { plan, key: new Secret(demoKeyFor(plan.name) ?? '', demoSource(plan.name)) };
  }
  const [name, key] = [...parseKeys([given], plans, '--ban-key')][0] as [string, string];
  if (!embedded && [...keys.values()].includes(key))
    throw new InputError(
      `--ban-key: the ${name} key is also given with --api-key; the ban would spoil its measurement`,
    );
  return { plan: getPlan(plans, name), key: new Secret(key, `--ban-key ${name}`) };
}

/** A `capacity.<plan>.*` threshold names a plan probed; a ban figure, the plan of the ban key. */
function checkThresholdPlans(
  thresholds: readonly Threshold[],
  probedPlans: Set<string>,
  banPlan: string | undefined,
) {
  for (const t of thresholds)
    if (BAN_METRICS.has(t.metric)) {
      if (banPlan !== t.capacityPlan)
        throw new InputError(
          `threshold '${t.expression}': ${t.metric} needs --probe-ban with a ${t.capacityPlan} key (--ban-key ${t.capacityPlan}=KEY)`,
        );
    } else if (t.capacityPlan !== undefined && !probedPlans.has(t.capacityPlan))
      throw new InputError(
        `threshold '${t.expression}': plan '${t.capacityPlan}' is not probed (give --api-key ${t.capacityPlan}=KEY)`,
      );
}

/** A step is judged as a run is; the number's own criteria are --threshold's. */
function stepThreshold(text: string, ops: ReadonlySet<string>): Threshold {
  const parsed = parseThreshold(text, 'cli', ops);
  if (parsed.capacityPlan !== undefined)
    throw new InputError(
      `--tenant-threshold '${parsed.expression}': a step is judged as a run is (p99<300ms, errors<1%, plan:pro:p99<300ms); capacity.tenants.* goes with --threshold`,
    );
  return parsed;
}
