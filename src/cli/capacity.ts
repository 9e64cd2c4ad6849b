import { basename, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { demoKeyFor } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type Plan,
  planRate,
  scalePlan,
  shortestWindow,
} from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import { DEFAULT_MAX_STRIKES } from '../capacity/ban-probe.ts';
import { capacityEstimateMs, dailyEstimateMs, dailyWindow } from '../capacity/daily.ts';
import { rateSearchBoundMs, SEARCH_MAX_PROBES, SEARCH_MAX_REFUSED } from '../capacity/rate-search.ts';
import { type CapacityTarget, runCapacity } from '../capacity/run-capacity.ts';
import { formatBanReport, formatCapacityTable } from '../capacity/table.ts';
import { metricsFlags, metricsOptions, stopMetrics } from '../metrics/cli.ts';
import { LiveMetrics } from '../metrics/live-metrics.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import { BAN_METRICS, parseThreshold } from '../report/threshold-parse.ts';
import type { RunResult } from '../result/types.ts';
import {
  capacityTenants,
  DEFAULT_MAX_TENANTS,
  DEFAULT_STEP_DURATION,
  DEFAULT_TENANT_THRESHOLD,
  TENANT_ONLY_FLAGS,
} from './capacity-tenants.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { EXIT } from './exit-codes.ts';
import { Interrupt } from './interrupt.ts';
import { reachable } from './reachable.ts';
import { readJsonFile } from './read-json-file.ts';
import { writeForced, writeResultAndReport } from './write-output.ts';

/**
 * A minute window lasts 6 s on the embedded server, as for `run`. At 60 (1 s windows) a shared,
 * loaded machine fell behind the Pro and Business rates (300 and 1000 a second) and a paced window
 * drew a 429; at 10 every plan held its schedule, all four in 27 s.
 */
export const CAPACITY_TIME_SCALE = 10;
/** The embedded server's ban for --probe-ban, unscaled (its documented default), passed explicitly so that it can be said up front. */
export const EMBEDDED_BAN_DURATION = '10m';
/** Requests per second one key is driven at, at most; above it the embedded server runs slower for that plan. */
export const DEFAULT_MAX_RATE = 500;

export function capacityOptions(yargs: Argv) {
  return metricsOptions(
    yargs
      .option('base-url', { type: 'string', describe: 'Target; without it the reference server is started' })
      .option('key', {
        type: 'string',
        array: true,
        describe: 'PLAN=KEY, repeatable (default with the embedded server: its demo key for every plan)',
      })
      .option('plans', { type: 'string', describe: 'JSON file overriding plan limits and windows' })
      .option('windows', { type: 'number', default: 2, describe: 'Windows sent at the plan rate' })
      .option('time-scale', {
        type: 'number',
        describe: `The target's windows are the plan's divided by N (embedded: ${CAPACITY_TIME_SCALE}, else 1; with --tenants 1 by default, embedded too: real quotas)`,
      })
      .option('max-rate', {
        type: 'number',
        default: DEFAULT_MAX_RATE,
        describe:
          'Requests per second per key this machine can drive; faster plans get their own, slower embedded server',
      })
      .option('daily', {
        type: 'boolean',
        default: false,
        describe:
          "Also walk each plan's daily quota at the plan rate to its 429 (day / minute limit windows: hours against a real server; the time is said before starting)",
      })
      .option('probe-ban', {
        type: 'boolean',
        default: false,
        describe:
          'Provoke and measure the temporary ban: exhaust a window, send requests inside its Retry-After until banned, wait the ban out. Only on --ban-key',
      })
      .option('ban-key', {
        type: 'string',
        describe:
          'PLAN=KEY that --probe-ban may get banned; never one of the --key keys (embedded: PLAN, default free, on a server of its own)',
      })
      .option('ban-max-wait', {
        type: 'string',
        default: '15m',
        describe: 'Longest announced ban --probe-ban waits out to see it end (e.g. 90s, 15m, 1h)',
      })
      .option('threshold', {
        type: 'string',
        array: true,
        describe:
          "Pass/fail criterion, repeatable, e.g. 'capacity.pro.accepted_per_minute>=300', 'capacity.free.first_429_at==61', 'capacity.free.reset_accuracy_ms<=1000', 'capacity.free.max_in_flight>=4' (requests in flight the target admits, when a concurrency limit was seen)",
      })
      .option('tenants', {
        type: 'string',
        describe:
          "Tenant capacity instead: ramp tenants of a plan ('pro') or a mix in fixed proportions ('free=4,pro=1'), each at its plan's full quota, until a step breaks; report the largest number that held",
      })
      .option('tenant-threshold', {
        type: 'string',
        array: true,
        describe: `--tenants: what each step must keep, repeatable, as run's --threshold (default ${DEFAULT_TENANT_THRESHOLD}); 5xx, 429s to paced tenants and limiter header failures always break a step`,
      })
      .option('step-duration', {
        type: 'string',
        describe: `--tenants: length of each step (default ${DEFAULT_STEP_DURATION})`,
      })
      .option('max-tenants', {
        type: 'number',
        describe: `--tenants: the ramp's bound (default ${DEFAULT_MAX_TENANTS.toLocaleString('en-US')}; the embedded server mints that many keys)`,
      })
      .option('tenants-start', { type: 'number', describe: '--tenants: the first step (default 1)' })
      .option('tenants-file', {
        type: 'string',
        describe:
          '--tenants with --base-url: the keys, CSV or JSON (plan,key[,name]; key env:NAME reads a variable), as run --tenants; never printed or written',
      })
      .option('out', { type: 'string', describe: 'Directory for result.json and report.html' })
      .option('timeout', { type: 'string', default: '10s', describe: 'Request timeout (e.g. 10s, 500ms)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'Only the result path' })
      .requiresArg([
        'base-url',
        'key',
        'plans',
        'windows',
        'time-scale',
        'max-rate',
        'threshold',
        'out',
        'ban-key',
        'ban-max-wait',
        'tenants',
        'tenant-threshold',
        'step-duration',
        'max-tenants',
        'tenants-start',
        'tenants-file',
      ]),
  );
}

export type CapacityArgs = Awaited<ReturnType<typeof capacityOptions>['argv']>;

function parseKeys(given: readonly string[]): Map<string, string> {
  const keys = new Map<string, string>();
  for (const text of given) {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1)
      throw new InputError(`--key: expected PLAN=KEY, got '${text.slice(0, at > 0 ? at : 20)}=…'`);
    keys.set(text.slice(0, at), text.slice(at + 1));
  }
  return keys;
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
): { plan: Plan; key: string } {
  if (given === undefined || !given.includes('=')) {
    if (!embedded)
      throw new InputError(
        '--probe-ban needs --ban-key PLAN=KEY: a key you allow to be banned, none of the --key keys',
      );
    const plan = getPlan(plans, given ?? 'free');
    return { plan, key: demoKeyFor(plan.name) ?? '' };
  }
  const [name, key] = [...parseKeys([given])][0] as [string, string];
  if (!embedded && [...keys.values()].includes(key))
    throw new InputError(
      `--ban-key: the ${name} key is also given with --key; the ban would spoil its measurement`,
    );
  return { plan: getPlan(plans, name), key };
}

/** The largest whole scale, at most `scale`, at which the plan's rate stays within `maxRate`. */
export function feasibleScale(plan: Plan, scale: number, maxRate: number): number {
  const unscaled = planRate(plan.windows);
  if (unscaled * scale <= maxRate * (1 + 1e-9)) return scale;
  return Math.max(1, Math.floor((maxRate / unscaled) * (1 + 1e-9)));
}

export async function capacity(args: CapacityArgs): Promise<number> {
  if (args.tenants !== undefined) return capacityTenants(args);
  for (const [field, flag] of TENANT_ONLY_FLAGS)
    if (args[field] !== undefined) throw new InputError(`${flag} is a flag of capacity --tenants`);
  if (args.banKey !== undefined && !args.probeBan)
    throw new InputError('--ban-key is only used with --probe-ban');
  const banMaxWaitMs = parseDuration(args.banMaxWait, '--ban-max-wait');
  // A duration with its unit, as run takes it (a number of ms read '10s' as NaN).
  const timeoutMs = parseDuration(args.timeout, '--timeout');
  if (!Number.isInteger(args.windows) || args.windows < 1 || args.windows > 10)
    throw new InputError('--windows must be a whole number from 1 to 10');
  if (!(args.maxRate > 0)) throw new InputError('--max-rate must be a positive number');
  const plans = args.plans
    ? applyPlanOverrides(DEFAULT_PLANS, readJsonFile(args.plans, '--plans'), `--plans ${args.plans}`)
    : DEFAULT_PLANS;
  const embedded = args.baseUrl === undefined;
  const timeScale = args.timeScale ?? (embedded ? CAPACITY_TIME_SCALE : 1);
  if (!(timeScale > 0) || !Number.isFinite(timeScale))
    throw new InputError('--time-scale must be a positive number');
  const keys = parseKeys(args.key ?? []);
  if (keys.size === 0) {
    if (!embedded) throw new InputError('--key PLAN=KEY is required with --base-url');
    for (const name of Object.keys(DEFAULT_PLANS)) keys.set(name, demoKeyFor(name) as string);
  }
  const chosen = [...keys].map(([name, key]) => ({ plan: getPlan(plans, name), key }));
  const banChoice = args.probeBan ? parseBanKey(args.banKey, embedded, keys, plans) : undefined;
  const thresholds = (args.threshold ?? []).map((t) => parseThreshold(t, 'cli', new Set(['listPets'])));
  for (const t of thresholds)
    if (BAN_METRICS.has(t.metric)) {
      if (banChoice?.plan.name !== t.capacityPlan)
        throw new InputError(
          `threshold '${t.expression}': ${t.metric} needs --probe-ban with a ${t.capacityPlan} key (--ban-key ${t.capacityPlan}=KEY)`,
        );
    } else if (t.capacityPlan !== undefined && !keys.has(t.capacityPlan))
      throw new InputError(
        `threshold '${t.expression}': plan '${t.capacityPlan}' is not probed (give --key ${t.capacityPlan}=KEY)`,
      );
  const metricsSetup = metricsFlags({ ...args, workers: 1 });
  const spec = await loadSpec(DEFAULT_SPEC_PATH);

  for (const { plan } of chosen)
    if (args.daily && !dailyWindow(plan))
      throw new InputError(
        `--daily: plan '${plan.name}' has no window longer than its shortest: no daily quota`,
      );

  // Ctrl-C ends the probes early; what they measured is still written, marked partial (exit 130).
  // A second one exits at once, with every request so far and the plans finished.
  const interrupt = new Interrupt();
  const outputDir = (result: RunResult) =>
    resolve(args.out ?? join('reports', `capacity-${result.meta.startedAt.replace(/[:.]/g, '-')}`));
  let snapshot: (() => RunResult) | undefined;
  interrupt.onForce(() => writeForced(snapshot?.(), interrupt.by, outputDir, 'capacity'));
  const servers: ServerProcess[] = [];
  const stopAll = () => {
    for (const s of servers) s.child.kill();
  };
  process.once('exit', stopAll);
  let metrics: LiveMetrics | undefined;
  try {
    const targets: CapacityTarget[] = [];
    let ban: CapacityTarget | undefined;
    let target: string;
    if (embedded) {
      // One server per time scale: a plan too fast for this machine at the asked scale gets a slower one.
      const byScale = new Map<number, string>();
      for (const { plan, key } of chosen) {
        const scale = args.timeScale === undefined ? feasibleScale(plan, timeScale, args.maxRate) : timeScale;
        let url = byScale.get(scale);
        if (url === undefined) {
          const serverArgs = ['--time-scale', String(scale)];
          if (args.plans) serverArgs.push('--plans', args.plans);
          const server = await spawnServer(serverArgs);
          servers.push(server);
          url = server.url;
          byScale.set(scale, url);
        }
        targets.push({ plan, apiKey: key, baseUrl: url, timeScale: scale });
      }
      if (banChoice) {
        // Its own server: the ban and the deliberate requests inside Retry-After touch nothing else.
        const scale =
          args.timeScale === undefined ? feasibleScale(banChoice.plan, timeScale, args.maxRate) : timeScale;
        const serverArgs = ['--time-scale', String(scale), '--ban-duration', EMBEDDED_BAN_DURATION];
        if (args.plans) serverArgs.push('--plans', args.plans);
        const server = await spawnServer(serverArgs);
        servers.push(server);
        ban = { plan: banChoice.plan, apiKey: banChoice.key, baseUrl: server.url, timeScale: scale };
      }
      target = [...byScale.values()].join(' ');
    } else {
      let url: URL;
      try {
        url = new URL(args.baseUrl as string);
      } catch {
        throw new InputError(`--base-url: '${args.baseUrl}' is not a URL`);
      }
      if (!/^https?:$/.test(url.protocol)) throw new InputError('--base-url must be http:// or https://');
      target = `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
      if (!(await reachable(url))) throw new InputError(`target ${target} is unreachable`, EXIT.UNREACHABLE);
      for (const { plan, key } of chosen) targets.push({ plan, apiKey: key, baseUrl: url.href, timeScale });
      if (banChoice) ban = { plan: banChoice.plan, apiKey: banChoice.key, baseUrl: url.href, timeScale };
    }
    if (!args.quiet) {
      for (const t of targets) {
        const scaled = scalePlan(t.plan, t.timeScale);
        const w = shortestWindow(scaled.windows);
        process.stderr.write(
          `capacity: ${t.plan.name}: ${w?.limit} per ${w?.seconds} s (time scale ${t.timeScale}), ${args.windows} windows at the plan rate, then one exhausted: about ${w ? humanDuration(capacityEstimateMs(w, args.windows)) : '?'} against a window that announces its reset (said again once the first answers tell the latency and the order)${w ? `; a limiter that tells no wait or refills continuously adds a search for its rate: at most ${SEARCH_MAX_PROBES} requests, ${SEARCH_MAX_REFUSED} of them refused, and ${humanDuration(rateSearchBoundMs(w.seconds * 1000, w.limit))}` : ''}\n`,
        );
        const day = dailyWindow(scaled);
        if (args.daily && w && day)
          process.stderr.write(
            `capacity: ${t.plan.name}: --daily walks ${day.limit} requests a day at ${w.limit} per ${w.seconds} s: about ${humanDuration(dailyEstimateMs(w, day, args.windows))} in all; the day's return (${humanDuration(day.seconds * 1000)} window) is announced, not waited for\n`,
          );
      }
      if (ban)
        process.stderr.write(
          `capacity: ban probe on a ${ban.plan.name} key: one window exhausted, then up to ${DEFAULT_MAX_STRIKES} requests inside its Retry-After until banned; the ban${embedded ? ` (${humanDuration(parseDuration(EMBEDDED_BAN_DURATION) / ban.timeScale)} on the embedded server)` : ''} is waited out up to --ban-max-wait ${args.banMaxWait}${embedded ? '' : ', after every plan is measured'}\n`,
        );
    }
    // Every plan's probe records into one recorder: one set of series, `plan` naming them all. A
    // window's utilisation is a plan's own, so it is pushed only when one plan is probed.
    metrics =
      metricsSetup &&
      new LiveMetrics({
        ...metricsSetup,
        identity: {
          scenario: 'capacity',
          target,
          plan: targets.map((t) => t.plan.name).join(','),
        },
        windows:
          targets.length === 1
            ? scalePlan((targets[0] as CapacityTarget).plan, (targets[0] as CapacityTarget).timeScale).windows
            : [],
      });
    const live = metrics;
    const {
      result,
      reports,
      ban: banReport,
    } = await runCapacity({
      target,
      embeddedTarget: embedded,
      targets,
      windows: args.windows,
      daily: args.daily,
      operations: spec.operations,
      spec: 'petstore.openapi.yaml (built in)',
      timeoutMs,
      log: args.quiet ? undefined : (plan, line) => process.stderr.write(`capacity: ${plan}: ${line}\n`),
      signal: interrupt.signal,
      ban: ban && { ...ban, maxWaitMs: banMaxWaitMs, alongside: embedded },
      onSnapshot: (take) => {
        snapshot = take;
      },
      ...(live ? { onLive: (run) => live.start(run) } : {}),
    });
    // Before the result is written: the last push carries the final counters.
    await stopMetrics(metrics, { interrupted: interrupt.aborted, quiet: args.quiet });
    if (metrics) result.meta.runId = metrics.runId;
    if (thresholds.length > 0) result.thresholds = evaluateThresholds(thresholds, result);
    const dir = outputDir(result);
    const { path, written, failed: writeFailed } = writeResultAndReport(dir, result, basename(dir));
    const failedPlans = reports.filter((r) => r.verdict === 'fail');
    const failedThresholds = (result.thresholds ?? []).filter((t) => !t.passed);
    if (args.quiet) {
      if (path) console.log(path);
    } else {
      console.log(formatCapacityTable(reports));
      if (banReport) console.log(formatBanReport(banReport));
      for (const t of result.thresholds ?? [])
        console.log(`threshold ${t.expression}: ${t.passed ? 'pass' : `FAIL (${t.detail})`}`);
      console.log(written.join('\n'));
    }
    if (interrupt.aborted) {
      process.stderr.write(
        'petstore-load: capacity interrupted: the result holds what was measured (partial)\n',
      );
      return EXIT.INTERRUPTED;
    }
    const banFailed = banReport?.verdict === 'fail';
    if (failedPlans.length > 0 || failedThresholds.length > 0 || banFailed) {
      const why = [
        ...failedPlans.map((r) => `${r.plan}: ${r.reasons[0]}`),
        ...(banFailed ? [`ban probe: ${banReport?.reasons[0]}`] : []),
        ...failedThresholds.map((t) => `threshold ${t.expression}: ${t.detail}`),
      ];
      process.stderr.write(`petstore-load: capacity failed: ${why.join('; ')}\n`);
      return EXIT.THRESHOLDS_FAILED;
    }
    return writeFailed ? EXIT.WRITE_FAILED : EXIT.OK;
  } finally {
    await stopMetrics(metrics, { interrupted: true, quiet: args.quiet });
    process.removeListener('exit', stopAll);
    interrupt.release();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** `35 s`, `1 min 52 s`, `2 h 14 min`: how long, as a person reads it before deciding to wait. */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}
