import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { demoKeyFor } from '../api/demo-keys.ts';
import { InputError } from '../api/input-error.ts';
import { applyPlanOverrides, DEFAULT_PLANS, getPlan, type Plan, planRate, scalePlan } from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import { type CapacityTarget, runCapacity } from '../capacity/run-capacity.ts';
import { formatCapacityTable } from '../capacity/table.ts';
import { renderHtmlReport } from '../report/html.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import { parseThreshold } from '../report/threshold-parse.ts';
import { writeResult } from '../result/write.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { EXIT } from './exit-codes.ts';
import { reachable } from './reachable.ts';
import { readJsonFile } from './read-json-file.ts';
import { writeOutput } from './write-output.ts';

/**
 * A minute window lasts 6 s on the embedded server, as for `run`. At 60 (1 s windows) a shared,
 * loaded machine fell behind the Pro and Business rates (300 and 1000 a second) and a paced window
 * drew a 429; at 10 every plan held its schedule, all four in 27 s.
 */
export const CAPACITY_TIME_SCALE = 10;
/** Requests per second one key is driven at, at most; above it the embedded server runs slower for that plan. */
export const DEFAULT_MAX_RATE = 500;

export function capacityOptions(yargs: Argv) {
  return yargs
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
      describe: `The target's windows are the plan's divided by N (embedded: ${CAPACITY_TIME_SCALE}, else 1)`,
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
      describe: 'Also walk the daily quota (not implemented yet)',
    })
    .option('probe-ban', {
      type: 'boolean',
      default: false,
      describe: 'Probe the temporary ban with --ban-key (not implemented yet)',
    })
    .option('ban-key', { type: 'string', describe: 'PLAN=KEY that --probe-ban may get banned' })
    .option('threshold', {
      type: 'string',
      array: true,
      describe:
        "Pass/fail criterion, repeatable, e.g. 'capacity.pro.accepted_per_minute>=300', 'capacity.free.first_429_at==61', 'capacity.free.reset_accuracy_ms<=1000'",
    })
    .option('out', { type: 'string', describe: 'Directory for result.json and report.html' })
    .option('timeout', { type: 'number', default: 10_000, describe: 'Request timeout, ms' })
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
    ]);
}

type CapacityArgs = Awaited<ReturnType<typeof capacityOptions>['argv']>;

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

/** The largest whole scale, at most `scale`, at which the plan's rate stays within `maxRate`. */
export function feasibleScale(plan: Plan, scale: number, maxRate: number): number {
  const unscaled = planRate(plan.windows);
  if (unscaled * scale <= maxRate * (1 + 1e-9)) return scale;
  return Math.max(1, Math.floor((maxRate / unscaled) * (1 + 1e-9)));
}

export async function capacity(args: CapacityArgs): Promise<number> {
  if (args.daily) throw new InputError('--daily: not implemented yet', EXIT.USAGE);
  if (args.probeBan || args.banKey !== undefined)
    throw new InputError('--probe-ban: not implemented yet', EXIT.USAGE);
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
  const thresholds = (args.threshold ?? []).map((t) => parseThreshold(t, 'cli', new Set(['listPets'])));
  for (const t of thresholds)
    if (t.capacityPlan !== undefined && !keys.has(t.capacityPlan))
      throw new InputError(
        `threshold '${t.expression}': plan '${t.capacityPlan}' is not probed (give --key ${t.capacityPlan}=KEY)`,
      );
  const spec = await loadSpec(DEFAULT_SPEC_PATH);

  const servers: ServerProcess[] = [];
  const stopAll = () => {
    for (const s of servers) s.child.kill();
  };
  process.once('exit', stopAll);
  try {
    const targets: CapacityTarget[] = [];
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
    }
    if (!args.quiet) {
      for (const t of targets) {
        const w = scalePlan(t.plan, t.timeScale).windows[0];
        process.stderr.write(
          `capacity: ${t.plan.name}: ${w?.limit} per ${w?.seconds} s (time scale ${t.timeScale}), ${args.windows} windows at the plan rate, then one exhausted\n`,
        );
      }
    }
    const { result, reports } = await runCapacity({
      target,
      embeddedTarget: embedded,
      targets,
      windows: args.windows,
      operations: spec.operations,
      spec: 'petstore.openapi.yaml (built in)',
      timeoutMs: args.timeout,
    });
    if (thresholds.length > 0) result.thresholds = evaluateThresholds(thresholds, result);
    const stamp = result.meta.startedAt.replace(/[:.]/g, '-');
    const dir = resolve(args.out ?? join('reports', `capacity-${stamp}`));
    const path = writeResult(dir, result);
    const reportOk = writeOutput(join(dir, 'report.html'), renderHtmlReport(result), 'report');
    const failedPlans = reports.filter((r) => r.verdict === 'fail');
    const failedThresholds = (result.thresholds ?? []).filter((t) => !t.passed);
    if (args.quiet) console.log(path);
    else {
      console.log(formatCapacityTable(reports));
      for (const t of result.thresholds ?? [])
        console.log(`threshold ${t.expression}: ${t.passed ? 'pass' : `FAIL (${t.detail})`}`);
      console.log(
        `result written to ${path}${reportOk ? `\nreport written to ${join(dir, 'report.html')}` : ''}`,
      );
    }
    if (failedPlans.length > 0 || failedThresholds.length > 0) {
      const why = [
        ...failedPlans.map((r) => `${r.plan}: ${r.reasons[0]}`),
        ...failedThresholds.map((t) => `threshold ${t.expression}: ${t.detail}`),
      ];
      process.stderr.write(`petstore-load: capacity failed: ${why.join('; ')}\n`);
      return EXIT.THRESHOLDS_FAILED;
    }
    return reportOk ? EXIT.OK : EXIT.USAGE;
  } finally {
    process.removeListener('exit', stopAll);
    await Promise.all(servers.map((s) => s.stop()));
  }
}
