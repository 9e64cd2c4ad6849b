import { humanDuration, parseDuration } from '../api/duration.ts';
import { EXIT } from '../api/exit-codes.ts';
import { scalePlan, shortestWindow } from '../api/plans.ts';
import { DEFAULT_MAX_STRIKES } from '../capacity/measure/ban-probe.ts';
import { capacityEstimateMs, dailyEstimateMs, dailyWindow } from '../capacity/measure/daily.ts';
import { longestWithinReachMs } from '../capacity/measure/longer-windows.ts';
import { defaultMaxWaitMs } from '../capacity/measure/max-wait.ts';
import { rateSearchBoundMs, SEARCH_MAX_PROBES, SEARCH_MAX_REFUSED } from '../capacity/measure/rate-search.ts';
import { describeRequest } from '../capacity/probed-operation.ts';
import { formatBanReport, formatCapacityTable } from '../capacity/report/table.ts';
import { type CapacityTarget, runCapacity } from '../capacity/run-capacity.ts';
import { EMBEDDED_BAN_DURATION, type PlanProbeConfig, resolveCapacityConfig } from '../config/capacity.ts';
import type { CapacityArgs } from '../config/capacity-flags.ts';
import { printable } from '../config/capacity-print.ts';
import { configJson } from '../config/print.ts';
import type { LiveMetricsOptions } from '../metrics/live-metrics.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import { verdictLines, verdictOf } from '../report/verdict.ts';
import type { RunResult } from '../result/types.ts';
import { capacityTenants } from './capacity-tenants.ts';
import { spawnServer } from './embedded-server.ts';
import { checkReachable } from './reachable.ts';
import { exitCodeOf, type Outputs, type Session, withSession } from './session.ts';
import { checkOutputDir, writeResultAndReportTo } from './write-output.ts';

type CapacityOutputs = ReturnType<typeof writeResultAndReportTo>;

export type { CapacityArgs };

/** `capacity`: parse, resolve, then print the configuration or run it and write its outputs. */
export async function capacity(args: CapacityArgs): Promise<number> {
  const config = await resolveCapacityConfig(args);
  if (config.printConfig) {
    process.stdout.write(configJson(printable(config)));
    return EXIT.OK;
  }
  checkOutputDir(config.out);
  return config.mode === 'tenants' ? capacityTenants(config) : probePlans(config);
}

/** The targets the probes drive: embedded servers started (one per time scale), or the one given. */
async function openTargets(
  c: PlanProbeConfig,
  session: Session<Outputs>,
): Promise<{ target: string; targets: CapacityTarget[]; ban: CapacityTarget | undefined }> {
  const embeddedServer = async (scale: number, extra: string[] = []) => {
    const serverArgs = ['--time-scale', String(scale), ...extra];
    if (c.plansFile) serverArgs.push('--plans', c.plansFile);
    return session.own(await spawnServer(serverArgs)).url;
  };
  const targets: CapacityTarget[] = [];
  let ban: CapacityTarget | undefined;
  if (c.baseUrl === undefined) {
    // One server per time scale: a plan too fast for this machine at the asked scale gets a slower one.
    const byScale = new Map<number, string>();
    for (const { plan, key, timeScale, maxWaitMs } of c.keys) {
      let url = byScale.get(timeScale);
      if (url === undefined) {
        url = await embeddedServer(timeScale);
        byScale.set(timeScale, url);
      }
      targets.push({ plan, apiKey: key.reveal(), baseUrl: url, timeScale, maxWaitMs });
    }
    // Its own server: the ban and the deliberate requests inside Retry-After touch nothing else.
    if (c.ban) {
      const url = await embeddedServer(c.ban.timeScale, ['--ban-duration', EMBEDDED_BAN_DURATION]);
      ban = { plan: c.ban.plan, apiKey: c.ban.key.reveal(), baseUrl: url, timeScale: c.ban.timeScale };
    }
    return { target: [...byScale.values()].join(' '), targets, ban };
  }
  const url = c.baseUrl;
  const target = `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
  const network = c.network.options;
  await checkReachable(url, network, target);
  for (const { plan, key, timeScale, maxWaitMs } of c.keys)
    targets.push({ plan, apiKey: key.reveal(), baseUrl: url.href, timeScale, maxWaitMs, network });
  if (c.ban)
    ban = {
      plan: c.ban.plan,
      apiKey: c.ban.key.reveal(),
      baseUrl: url.href,
      timeScale: c.ban.timeScale,
      network,
    };
  return { target, targets, ban };
}

/** What each probe will do and about how long it takes, said before it starts. */
function announce(c: PlanProbeConfig, targets: readonly CapacityTarget[], ban: CapacityTarget | undefined) {
  const embedded = c.baseUrl === undefined;
  process.stderr.write(`capacity: every probe sends ${describeRequest(c.probe)}, from ${c.spec}\n`);
  for (const t of targets) {
    const scaled = scalePlan(t.plan, t.timeScale);
    const w = shortestWindow(scaled.windows);
    const longerMs = w
      ? longestWithinReachMs(scaled, w, c.windows * w.limit, t.maxWaitMs ?? defaultMaxWaitMs(scaled))
      : 0;
    const longer = longerMs > 0 ? `, then its ${humanDuration(longerMs)} window waited out and spent` : '';
    process.stderr.write(
      `capacity: ${t.plan.name}: ${w?.limit} per ${w?.seconds} s (time scale ${t.timeScale}), ${c.windows} windows at the plan rate, then one exhausted${longer}: about ${w ? humanDuration(capacityEstimateMs(w, c.windows, longerMs)) : '?'} against a window that announces its reset (said again once the first answers tell the latency and the order)${w ? `; a limiter that tells no wait or refills continuously adds a search for its rate: at most ${SEARCH_MAX_PROBES} requests, ${SEARCH_MAX_REFUSED} of them refused, and ${humanDuration(rateSearchBoundMs(w.seconds * 1000, w.limit))}` : ''}\n`,
    );
    const day = dailyWindow(scaled);
    if (c.daily && w && day)
      process.stderr.write(
        `capacity: ${t.plan.name}: --daily walks ${day.limit} requests a day at ${w.limit} per ${w.seconds} s: about ${humanDuration(dailyEstimateMs(w, day, c.windows))} in all; the day's return (${humanDuration(day.seconds * 1000)} window) is announced, not waited for\n`,
      );
  }
  if (ban)
    process.stderr.write(
      `capacity: ban probe on a ${ban.plan.name} key: one window exhausted, then up to ${DEFAULT_MAX_STRIKES} requests inside its Retry-After until banned; the ban${embedded ? ` (${humanDuration(parseDuration(EMBEDDED_BAN_DURATION) / ban.timeScale)} on the embedded server)` : ''} is waited out up to --ban-max-wait ${c.ban?.banMaxWait}${embedded ? '' : ', after every plan is measured'}\n`,
    );
}

/**
 * Every plan's probe records into one recorder: one set of series, `plan` naming them all. A
 * window's utilisation is a plan's own, so it is pushed only when one plan is probed.
 */
function liveMetrics(
  c: PlanProbeConfig,
  target: string,
  targets: readonly CapacityTarget[],
): LiveMetricsOptions | undefined {
  const only = targets.length === 1 ? (targets[0] as CapacityTarget) : undefined;
  return (
    c.metrics && {
      ...c.metrics,
      identity: { scenario: 'capacity', target, plan: targets.map((t) => t.plan.name).join(',') },
      windows: only ? scalePlan(only.plan, only.timeScale).windows : [],
    }
  );
}

/** The plan probes (and the ban probe): servers started, probes run, outputs written, exit code. */
function probePlans(c: PlanProbeConfig): Promise<number> {
  const write = (result: RunResult) => writeResultAndReportTo(c.out, 'capacity', result);
  return withSession({ label: 'capacity', quiet: c.quiet, write }, async (session) => {
    const { target, targets, ban } = await openTargets(c, session);
    if (session.stoppedEarly()) return EXIT.INTERRUPTED;
    if (!c.quiet) {
      for (const warning of c.network.warnings) process.stderr.write(`capacity: ${warning}\n`);
      announce(c, targets, ban);
    }
    const live = await session.useMetrics(liveMetrics(c, target, targets));
    const outcome = await runCapacity({
      target,
      embeddedTarget: c.baseUrl === undefined,
      targets,
      windows: c.windows,
      daily: c.daily,
      operations: c.operations,
      probe: c.probe,
      spec: c.spec,
      networkSeen: c.network.seen,
      timeoutMs: c.timeoutMs,
      refusalStatuses: c.refusalStatuses,
      log: c.quiet ? undefined : (plan, line) => process.stderr.write(`capacity: ${plan}: ${line}\n`),
      signal: session.interrupt.signal,
      ban: ban && c.ban && { ...ban, maxWaitMs: c.ban.maxWaitMs, alongside: c.baseUrl === undefined },
      // A second Ctrl-C exits at once, with every request so far and the plans finished.
      onSnapshot: session.onSnapshot,
      ...(live ? { onLive: (run) => live.start(run) } : {}),
    });
    await session.endMeasuring(outcome.result);
    return finish(c, outcome, session);
  });
}

/** Thresholds judged, outputs written, the table printed, and the exit code. */
function finish(
  c: PlanProbeConfig,
  { result, reports, ban: banReport }: Awaited<ReturnType<typeof runCapacity>>,
  session: Session<CapacityOutputs>,
): number {
  if (c.thresholds.length > 0) result.thresholds = evaluateThresholds(c.thresholds, result);
  const { path, written, failed: writeFailed } = session.write(result);
  const failedPlans = reports.filter((r) => r.verdict === 'fail');
  const failedThresholds = (result.thresholds ?? []).filter((t) => !t.passed);
  if (c.quiet) {
    if (path) console.log(path);
  } else {
    console.log(formatCapacityTable(reports));
    if (banReport) console.log(formatBanReport(banReport));
    for (const t of result.thresholds ?? [])
      console.log(`threshold ${t.expression}: ${t.passed ? 'pass' : `FAIL (${t.detail})`}`);
    // The table above lists each plan's verdict: the one verdict of the result is its headline.
    console.log(verdictLines(verdictOf(result), false).join('\n'));
    console.log(written.join('\n'));
  }
  const interrupted = session.interrupt.aborted;
  const banFailed = banReport?.verdict === 'fail';
  const why = [
    ...failedPlans.map((r) => `${r.plan}: ${r.reasons[0]}`),
    ...(banFailed ? [`ban probe: ${banReport?.reasons[0]}`] : []),
    ...failedThresholds.map((t) => `threshold ${t.expression}: ${t.detail}`),
  ];
  if (interrupted)
    process.stderr.write(
      'petstore-load: capacity interrupted: the result holds what was measured (partial)\n',
    );
  else if (why.length > 0) process.stderr.write(`petstore-load: capacity failed: ${why.join('; ')}\n`);
  return exitCodeOf({
    interrupted,
    failure: why.length > 0 ? EXIT.THRESHOLDS_FAILED : undefined,
    writeFailed,
  });
}
