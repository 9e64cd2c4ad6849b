import { randomBytes } from 'node:crypto';
import { EXIT } from '../api/exit-codes.ts';
import { getPlan, planRate, scalePlan } from '../api/plans.ts';
import { mintedKey, TENANT_SEED_ENV } from '../api/tenants.ts';
import { formatTenantCapacity } from '../capacity/report/table.ts';
import { mixLabel, restMsFor, runTenantCapacity } from '../capacity/tenants/run-tenant-capacity.ts';
import { keysNeeded, MAX_BISECT_STEPS } from '../capacity/tenants/tenant-ramp.ts';
import { evaluateTenantCapacityThreshold } from '../capacity/tenants/tenant-thresholds.ts';
import type { TenantRampConfig } from '../config/capacity.ts';
import type { LiveMetricsOptions } from '../metrics/live-metrics.ts';
import { verdictLines, verdictOf } from '../report/verdict.ts';
import type { RunResult } from '../result/types.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { checkReachable } from './reachable.ts';
import { exitCodeOf, type Session, withSession } from './session.ts';
import { writeResultAndReportTo } from './write-output.ts';

/**
 * The target and its tenants' keys: the embedded server minting what the ramp needs (the seed through
 * its environment: no key, and nothing to derive one, on a command line), or a URL and a file's keys.
 */
async function openTarget(s: TenantRampConfig): Promise<{
  baseUrl: URL;
  keyFor: (plan: string, n: number) => string;
  max: number;
  server?: ServerProcess;
}> {
  if (s.baseUrl === undefined) {
    const seed = randomBytes(16).toString('hex');
    const flag = Object.entries(keysNeeded(s.mix, s.maxTenants))
      .map(([plan, n]) => `${plan}=${n}`)
      .join(',');
    const serverArgs = ['--time-scale', String(s.timeScale), '--tenant-keys', flag];
    if (s.plansFile) serverArgs.push('--plans', s.plansFile);
    const server = await spawnServer(serverArgs, { [TENANT_SEED_ENV]: seed });
    return {
      baseUrl: new URL(server.url),
      keyFor: (plan, n) => mintedKey(seed, plan, n),
      max: s.maxTenants,
      server,
    };
  }
  const file = s.tenantKeys;
  if (file === undefined) throw new Error('capacity --tenants: --base-url without --tenants-file');
  const keys = {
    keyFor: (plan: string, n: number) => file.byPlan[plan]?.[n - 1]?.reveal() as string,
    max: file.max,
  };
  if (keys.max < s.maxTenants && !s.quiet)
    process.stderr.write(
      `capacity: --tenants-file ${s.tenantsFile}: its keys allow ${keys.max} tenants of the mix: the ramp stops there\n`,
    );
  return { baseUrl: s.baseUrl, ...keys };
}

/** What the ramp will do and how long it may take, before it starts. */
function announcement(s: TenantRampConfig, max: number): string {
  const rates = Object.keys(s.mix)
    .map((p) => {
      const rate = planRate(scalePlan(getPlan(s.plans, p), s.timeScale).windows);
      return `${p} ${Number(rate.toFixed(2))} req/s`;
    })
    .join(', ');
  return `capacity: tenants of ${mixLabel(s.mix)} at their full quota (${rates} each, time scale ${s.timeScale}), from ${s.start} doubling up to ${max}, then bisecting; steps of ${s.stepMs / 1000} s judged on ${s.stepThresholdTexts.join(', ')}, 5xx, 429s and the limiter's headers: ${estimate(s, max)}\n`;
}

/** Steps at most, and how long they take at most: said before starting. */
function estimate(s: TenantRampConfig, max: number): string {
  const doublings = Math.ceil(Math.log2(max / Math.max(1, s.start))) + 1;
  const steps = doublings + MAX_BISECT_STEPS;
  const seconds = Math.ceil((steps * (s.stepMs + restMsFor(s.stepMs) + 500)) / 1000) + 3;
  return `at most ${steps} steps, about ${seconds} s at most`;
}

/** `capacity --tenants`: the tenant ramp, its result and report, and the number on the terminal. */
export function capacityTenants(s: TenantRampConfig): Promise<number> {
  const write = (result: RunResult) => writeResultAndReportTo(s.out, 'capacity-tenants', result);
  return withSession({ label: 'capacity', quiet: s.quiet, write }, async (session) => {
    const { baseUrl, keyFor, max, server } = await openTarget(s);
    if (server) session.own(server);
    const target = `${baseUrl.protocol}//${baseUrl.host}${baseUrl.pathname.replace(/\/$/, '')}`;
    await checkReachable(baseUrl, s.network.options, target);
    if (session.stoppedEarly()) return EXIT.INTERRUPTED;
    if (!s.quiet) {
      for (const warning of s.network.warnings) process.stderr.write(`capacity: ${warning}\n`);
      process.stderr.write(announcement(s, max));
    }
    const live = await session.useMetrics(liveMetrics(s, target));
    const result = await runTenantCapacity({
      mix: s.mix,
      plans: s.plans,
      timeScale: s.timeScale,
      keyFor,
      start: s.start,
      maxTenants: max,
      stepMs: s.stepMs,
      thresholds: s.stepThresholds,
      baseUrl: baseUrl.href,
      network: s.network.options,
      target,
      embeddedTarget: s.baseUrl === undefined,
      targetName: s.baseUrl === undefined ? 'the reference server' : target,
      operations: s.operations,
      spec: s.spec,
      networkSeen: s.network.seen,
      timeoutMs: s.timeoutMs,
      refusalStatuses: s.refusalStatuses,
      log: s.quiet ? undefined : (line) => process.stderr.write(`capacity: ${line}\n`),
      signal: session.interrupt.signal,
      // A second Ctrl-C exits at once, with the steps ended so far.
      onSnapshot: session.onSnapshot,
      ...(live ? { onLive: (run, step) => live.start(run, { step }) } : {}),
    });
    await session.endMeasuring(result);
    const c = result.tenantCapacity;
    if (s.verdicts.length > 0)
      result.thresholds = s.verdicts.map((t) => evaluateTenantCapacityThreshold(t, c));
    return finish(s, result, session);
  });
}

/**
 * Each step (and the warm-up) is a run with a recorder of its own: its series carry a `step` label
 * (`warmup`, or its number of tenants), so that each starts at 0 and ends at its step's figures (the
 * result's are the step `config.workload.shownStep`'s) instead of resetting one series' counters at
 * every step. Tiers are labelled by their own plan, as in `run --tenants`; no quota utilisation of
 * the run's plan is pushed, the tiers' is.
 */
function liveMetrics(s: TenantRampConfig, target: string): LiveMetricsOptions | undefined {
  return (
    s.metrics && {
      ...s.metrics,
      identity: { scenario: 'capacity-tenants', target, plan: Object.keys(s.mix).join(',') },
      windows: [],
    }
  );
}

/** Outputs written, the number printed, and the exit code: 0 when a number was found. */
function finish(
  s: TenantRampConfig,
  result: Awaited<ReturnType<typeof runTenantCapacity>>,
  session: Session<ReturnType<typeof writeResultAndReportTo>>,
): number {
  const c = result.tenantCapacity;
  const { path, written, failed: writeFailed } = session.write(result);
  const failedThresholds = (result.thresholds ?? []).filter((t) => !t.passed);
  if (s.quiet) {
    if (path) console.log(path);
  } else {
    console.log(formatTenantCapacity(c));
    for (const t of result.thresholds ?? [])
      console.log(`threshold ${t.expression}: ${t.passed ? 'pass' : `FAIL (${t.detail})`}`);
    console.log(verdictLines(verdictOf(result), false).join('\n'));
    console.log(written.join('\n'));
  }
  const interrupted = session.interrupt.aborted;
  const why = [
    ...(c.held === null ? [c.sentence] : []),
    ...failedThresholds.map((t) => `threshold ${t.expression}: ${t.detail}`),
  ];
  if (interrupted)
    process.stderr.write('petstore-load: capacity interrupted: the result holds the steps run (partial)\n');
  else if (why.length > 0) process.stderr.write(`petstore-load: capacity failed: ${why.join('; ')}\n`);
  return exitCodeOf({
    interrupted,
    failure: why.length > 0 ? EXIT.THRESHOLDS_FAILED : undefined,
    writeFailed,
  });
}
