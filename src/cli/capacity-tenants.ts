import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  scalePlan,
} from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import { MAX_TENANT_KEYS, mintedKey, parseTenantsFile, TENANT_SEED_ENV } from '../api/tenants.ts';
import { mixLabel, restMsFor, runTenantCapacity } from '../capacity/run-tenant-capacity.ts';
import { formatTenantCapacity } from '../capacity/table.ts';
import { keysNeeded, largestWithKeys, MAX_BISECT_STEPS, parseTenantMix } from '../capacity/tenant-ramp.ts';
import {
  evaluateTenantCapacityThreshold,
  parseTenantCapacityThreshold,
} from '../capacity/tenant-thresholds.ts';
import { metricsFlags, stopMetrics } from '../metrics/cli.ts';
import { LiveMetrics } from '../metrics/live-metrics.ts';
import { parseThreshold } from '../report/threshold-parse.ts';
import type { RunResult } from '../result/types.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { EXIT } from './exit-codes.ts';
import { Interrupt } from './interrupt.ts';
import { reachable } from './reachable.ts';
import { readJsonFile } from './read-json-file.ts';
import { writeForced, writeResultAndReport } from './write-output.ts';

export const DEFAULT_TENANT_THRESHOLD = 'p99<300ms';
export const DEFAULT_STEP_DURATION = '5s';
export const DEFAULT_MAX_TENANTS = 10_000;

/** Flags of the tenant ramp, refused without --tenants; and the plan-probe flags refused with it. */
export const TENANT_ONLY_FLAGS = [
  ['tenantThreshold', '--tenant-threshold'],
  ['stepDuration', '--step-duration'],
  ['maxTenants', '--max-tenants'],
  ['tenantsStart', '--tenants-start'],
  ['tenantsFile', '--tenants-file'],
] as const;
/**
 * The flags `capacity --tenants` reads, as capacity's option table gives them: declared here by
 * their shape, since capacity.ts imports this file and the two must not import each other.
 */
export interface TenantArgs {
  tenants?: string;
  tenantsFile?: string;
  tenantsStart?: number;
  maxTenants?: number;
  stepDuration?: string;
  tenantThreshold?: string[];
  threshold?: string[];
  baseUrl?: string;
  plans?: string;
  timeScale?: number;
  timeout: string;
  out?: string;
  quiet: boolean;
  metrics?: string[];
  metricsInterval?: string;
  key?: string[];
  daily?: boolean;
  probeBan?: boolean;
  banKey?: string;
}

const PROBE_ONLY_FLAGS = [
  ['key', '--key'],
  ['daily', '--daily'],
  ['probeBan', '--probe-ban'],
  ['banKey', '--ban-key'],
] as const;

interface TenantSettings {
  plans: PlanTable;
  mix: Record<string, number>;
  timeScale: number;
  stepMs: number;
  maxTenants: number;
  start: number;
  timeoutMs: number;
}

function whole(value: number | undefined, fallback: number, flag: string, most: number): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > most)
    throw new InputError(`${flag} must be a whole number from 1 to ${most.toLocaleString('en-US')}`);
  return n;
}

/** Every flag checked, before a server starts or a request leaves. */
function settingsOf(args: TenantArgs): TenantSettings {
  for (const [field, flag] of PROBE_ONLY_FLAGS)
    if (args[field] !== undefined && args[field] !== false)
      throw new InputError(`${flag} measures one key per plan: it does not go with --tenants`);
  const plans = args.plans
    ? applyPlanOverrides(DEFAULT_PLANS, readJsonFile(args.plans, '--plans'), `--plans ${args.plans}`)
    : DEFAULT_PLANS;
  const mix = parseTenantMix(args.tenants as string, plans);
  const timeScale = args.timeScale ?? 1;
  if (!(timeScale > 0) || !Number.isFinite(timeScale))
    throw new InputError('--time-scale must be a positive number');
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  const stepMs = parseDuration(args.stepDuration ?? DEFAULT_STEP_DURATION, '--step-duration');
  if (stepMs < 500 || stepMs > 600_000) throw new InputError('--step-duration must be from 500ms to 10m');
  const maxTenants = whole(args.maxTenants, DEFAULT_MAX_TENANTS, '--max-tenants', MAX_TENANT_KEYS / 2);
  const start = whole(args.tenantsStart, 1, '--tenants-start', maxTenants);
  if (args.baseUrl === undefined && args.tenantsFile !== undefined)
    throw new InputError(
      '--tenants-file names keys of your own target: give --base-url too (the embedded server mints its own)',
    );
  if (args.baseUrl !== undefined && args.tenantsFile === undefined)
    throw new InputError(
      "--tenants with --base-url needs --tenants-file FILE (plan,key[,name]) for the tenants' keys",
    );
  return { plans, mix, timeScale, stepMs, maxTenants, start, timeoutMs };
}

/** A file's keys by plan, and the largest ramp they allow. */
function fileKeys(
  file: string,
  s: TenantSettings,
): { keyFor: (plan: string, n: number) => string; max: number } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(
      `--tenants-file ${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const byPlan: Record<string, string[]> = {};
  for (const k of parseTenantsFile(text, `--tenants-file ${file}`)) {
    const keys = byPlan[k.plan] ?? [];
    keys.push(k.key);
    byPlan[k.plan] = keys;
  }
  for (const plan of Object.keys(s.mix))
    if (!byPlan[plan]) throw new InputError(`--tenants-file ${file}: no key of plan '${plan}'`);
  const counts = Object.fromEntries(Object.entries(byPlan).map(([p, keys]) => [p, keys.length]));
  const max = largestWithKeys(s.mix, counts, s.maxTenants);
  if (max < s.start)
    throw new InputError(
      `--tenants-file ${file}: its keys allow at most ${max} tenants of the mix, fewer than --tenants-start ${s.start}`,
    );
  return { keyFor: (plan, n) => byPlan[plan]?.[n - 1] as string, max };
}

/**
 * The target and its tenants' keys: the embedded server minting what the ramp needs (the seed through
 * its environment: no key, and nothing to derive one, on a command line), or a URL and a file's keys.
 */
async function openTarget(
  args: TenantArgs,
  s: TenantSettings,
): Promise<{
  baseUrl: URL;
  keyFor: (plan: string, n: number) => string;
  max: number;
  server?: ServerProcess;
}> {
  if (args.baseUrl === undefined) {
    const seed = randomBytes(16).toString('hex');
    const flag = Object.entries(keysNeeded(s.mix, s.maxTenants))
      .map(([plan, n]) => `${plan}=${n}`)
      .join(',');
    const serverArgs = ['--time-scale', String(s.timeScale), '--tenant-keys', flag];
    if (args.plans) serverArgs.push('--plans', args.plans);
    const server = await spawnServer(serverArgs, { [TENANT_SEED_ENV]: seed });
    return {
      baseUrl: new URL(server.url),
      keyFor: (plan, n) => mintedKey(seed, plan, n),
      max: s.maxTenants,
      server,
    };
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(args.baseUrl);
  } catch {
    throw new InputError(`--base-url: '${args.baseUrl}' is not a URL`);
  }
  if (!/^https?:$/.test(baseUrl.protocol)) throw new InputError('--base-url must be http:// or https://');
  const keys = fileKeys(args.tenantsFile as string, s);
  if (keys.max < s.maxTenants && !args.quiet)
    process.stderr.write(
      `capacity: --tenants-file ${args.tenantsFile}: its keys allow ${keys.max} tenants of the mix: the ramp stops there\n`,
    );
  return { baseUrl, ...keys };
}

/** A step is judged as a run is; the number's own criteria are --threshold's. */
function stepThreshold(text: string, ops: ReadonlySet<string>) {
  const parsed = parseThreshold(text, 'cli', ops);
  if (parsed.capacityPlan !== undefined)
    throw new InputError(
      `--tenant-threshold '${parsed.expression}': a step is judged as a run is (p99<300ms, errors<1%, plan:pro:p99<300ms); capacity.tenants.* goes with --threshold`,
    );
  return parsed;
}

/** What the ramp will do and how long it may take, before it starts. */
function announcement(s: TenantSettings, max: number, stepThresholds: readonly string[]): string {
  const rates = Object.keys(s.mix)
    .map((p) => {
      const rate = planRate(scalePlan(getPlan(s.plans, p), s.timeScale).windows);
      return `${p} ${Number(rate.toFixed(2))} req/s`;
    })
    .join(', ');
  return `capacity: tenants of ${mixLabel(s.mix)} at their full quota (${rates} each, time scale ${s.timeScale}), from ${s.start} doubling up to ${max}, then bisecting; steps of ${s.stepMs / 1000} s judged on ${stepThresholds.join(', ')}, 5xx, 429s and the limiter's headers: ${estimate(s, max)}\n`;
}

/** Steps at most, and how long they take at most: said before starting. */
function estimate(s: TenantSettings, max: number): string {
  const doublings = Math.ceil(Math.log2(max / Math.max(1, s.start))) + 1;
  const steps = doublings + MAX_BISECT_STEPS;
  const seconds = Math.ceil((steps * (s.stepMs + restMsFor(s.stepMs) + 500)) / 1000) + 3;
  return `at most ${steps} steps, about ${seconds} s at most`;
}

/** `capacity --tenants`: the tenant ramp, its result and report, and the number on the terminal. */
export async function capacityTenants(args: TenantArgs): Promise<number> {
  const s = settingsOf(args);
  const stepThresholds = args.tenantThreshold ?? [DEFAULT_TENANT_THRESHOLD];
  const spec = await loadSpec(DEFAULT_SPEC_PATH);
  const ops = new Set(spec.operations.map((op) => op.id));
  const thresholds = stepThresholds.map((t) => stepThreshold(t, ops));
  const verdicts = (args.threshold ?? []).map(parseTenantCapacityThreshold);
  const metricsSetup = metricsFlags({ ...args, workers: 1 });
  const interrupt = new Interrupt();
  // A second Ctrl-C exits at once, with the steps ended so far.
  let snapshot: (() => RunResult | undefined) | undefined;
  interrupt.onForce(() => writeForced(snapshot?.(), interrupt.by, (r) => outputDir(args, r), 'capacity'));
  let metrics: LiveMetrics | undefined;
  let server: ServerProcess | undefined;
  const stop = () => server?.child.kill();
  process.once('exit', stop);
  try {
    const opened = await openTarget(args, s);
    server = opened.server;
    const { baseUrl, keyFor, max } = opened;
    const target = `${baseUrl.protocol}//${baseUrl.host}${baseUrl.pathname.replace(/\/$/, '')}`;
    if (!(await reachable(baseUrl)))
      throw new InputError(`target ${target} is unreachable`, EXIT.UNREACHABLE);
    if (!args.quiet) process.stderr.write(announcement(s, max, stepThresholds));
    // Each step (and the warm-up) is a run with a recorder of its own: its series carry a `step` label
    // (`warmup`, or its number of tenants), so that each starts at 0 and ends at its step's figures
    // (the result's are the step `config.workload.shownStep`'s) instead of resetting one series' counters
    // at every step. Tiers are labelled by their own plan, as in `run --tenants`; no quota utilisation
    // of the run's plan is pushed, the tiers' is.
    metrics =
      metricsSetup &&
      new LiveMetrics({
        ...metricsSetup,
        identity: {
          scenario: 'capacity-tenants',
          target,
          plan: Object.keys(s.mix).join(','),
        },
        windows: [],
      });
    const live = metrics;
    const result = await runTenantCapacity({
      mix: s.mix,
      plans: s.plans,
      timeScale: s.timeScale,
      keyFor,
      start: s.start,
      maxTenants: max,
      stepMs: s.stepMs,
      thresholds,
      baseUrl: baseUrl.href,
      target,
      embeddedTarget: args.baseUrl === undefined,
      targetName: args.baseUrl === undefined ? 'the reference server' : target,
      operations: spec.operations,
      spec: 'petstore.openapi.yaml (built in)',
      timeoutMs: s.timeoutMs,
      log: args.quiet ? undefined : (line) => process.stderr.write(`capacity: ${line}\n`),
      signal: interrupt.signal,
      onSnapshot: (take) => {
        snapshot = take;
      },
      ...(live ? { onLive: (run, step) => live.start(run, { step }) } : {}),
    });
    // Before the result is written: the last push carries the final counters.
    await stopMetrics(metrics, { interrupted: interrupt.aborted, quiet: args.quiet });
    if (metrics) result.meta.runId = metrics.runId;
    const c = result.tenantCapacity;
    if (verdicts.length > 0) result.thresholds = verdicts.map((t) => evaluateTenantCapacityThreshold(t, c));
    return finish(args, result, interrupt.aborted);
  } finally {
    await stopMetrics(metrics, { interrupted: true, quiet: args.quiet });
    process.removeListener('exit', stop);
    interrupt.release();
    await server?.stop();
  }
}

/** `--out`, else reports/capacity-tenants-<start time>/. */
function outputDir(args: TenantArgs, result: RunResult): string {
  return resolve(
    args.out ?? join('reports', `capacity-tenants-${result.meta.startedAt.replace(/[:.]/g, '-')}`),
  );
}

/** Outputs written, the number printed, and the exit code: 0 when a number was found. */
function finish(
  args: TenantArgs,
  result: Awaited<ReturnType<typeof runTenantCapacity>>,
  interrupted: boolean,
): number {
  const c = result.tenantCapacity;
  const dir = outputDir(args, result);
  const { path, written, failed: writeFailed } = writeResultAndReport(dir, result, basename(dir));
  const failedThresholds = (result.thresholds ?? []).filter((t) => !t.passed);
  if (args.quiet) {
    if (path) console.log(path);
  } else {
    console.log(formatTenantCapacity(c));
    for (const t of result.thresholds ?? [])
      console.log(`threshold ${t.expression}: ${t.passed ? 'pass' : `FAIL (${t.detail})`}`);
    console.log(written.join('\n'));
  }
  if (interrupted) {
    process.stderr.write('petstore-load: capacity interrupted: the result holds the steps run (partial)\n');
    return EXIT.INTERRUPTED;
  }
  const why = [
    ...(c.held === null ? [c.sentence] : []),
    ...failedThresholds.map((t) => `threshold ${t.expression}: ${t.detail}`),
  ];
  if (why.length > 0) {
    process.stderr.write(`petstore-load: capacity failed: ${why.join('; ')}\n`);
    return EXIT.THRESHOLDS_FAILED;
  }
  return writeFailed ? EXIT.WRITE_FAILED : EXIT.OK;
}
