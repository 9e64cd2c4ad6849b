import { describeAuth } from '../api/auth.ts';
import { getPlan, type Plan, scalePlan } from '../api/plans.ts';
import type { CapacityConfig, ProbedKey } from './capacity.ts';

/**
 * A resolved `capacity` configuration as `--print-config` shows it: what the run would do, in the
 * figures its result will carry (windows as the target sees them, durations in ms), keys as where
 * they came from, the metrics endpoints by host only, the document's operations by their key
 * placement. The parsed thresholds are shown as written.
 */
export function printable(config: CapacityConfig): Record<string, unknown> {
  const common = {
    command: config.mode === 'tenants' ? 'capacity --tenants' : 'capacity',
    target: config.baseUrl ? config.baseUrl.href : 'the reference server, started for the run',
    timeoutMs: config.timeoutMs,
    network: config.network.printable,
    plansFile: config.plansFile,
    auth: Object.fromEntries(
      [...config.auth]
        // The plan probes send their one operation only; the tenant ramp, every operation.
        .filter(([op]) => config.mode === 'tenants' || op === config.probe.operation.id)
        .map(([op, p]) => [op, { placement: describeAuth(p), from: p.from }]),
    ),
    metrics: config.metrics && {
      sinks: config.metrics.sinks.map((s) => `${s.kind} ${s.host}`),
      intervalMs: config.metrics.intervalMs,
    },
    out: config.out,
    quiet: config.quiet,
  };
  if (config.mode === 'tenants')
    return {
      ...common,
      mix: config.mix,
      timeScale: config.timeScale,
      plans: Object.fromEntries(
        Object.keys(config.mix).map((name) => [
          name,
          planView(getPlan(config.plans, name), config.timeScale),
        ]),
      ),
      stepMs: config.stepMs,
      start: config.start,
      maxTenants: config.maxTenants,
      tenantKeys: config.tenantsFile
        ? `from --tenants-file ${config.tenantsFile}`
        : 'minted by the embedded server',
      // The file's tenants, each key as where it came from, and how far they let the ramp go.
      ...(config.tenantKeys
        ? { tenantsInFile: config.tenantKeys.byPlan, rampUpTo: config.tenantKeys.max }
        : {}),
      stepThresholds: config.stepThresholdTexts,
      thresholds: config.verdicts.map((t) => t.expression),
    };
  const { operation, input } = config.probe;
  return {
    ...common,
    spec: config.spec,
    operation: { id: operation.id, method: operation.method, path: operation.path, values: input },
    windows: config.windows,
    daily: config.daily,
    maxRate: config.maxRate,
    timeScale: config.timeScale,
    plans: Object.fromEntries(
      config.keys.map((k) => [k.plan.name, { ...probedView(k), maxWaitMs: k.maxWaitMs }]),
    ),
    ban: config.ban && { ...probedView(config.ban), maxWaitMs: config.ban.maxWaitMs },
    thresholds: config.thresholds.map((t) => t.expression),
  };
}

function probedView(k: ProbedKey) {
  return { key: k.key, ...planView(k.plan, k.timeScale) };
}

/** The plan's windows as promised and as the target runs them at its time scale. */
function planView(plan: Plan, timeScale: number) {
  return {
    timeScale,
    windows: plan.windows,
    scaledWindows: scalePlan(plan, timeScale).windows,
  };
}
