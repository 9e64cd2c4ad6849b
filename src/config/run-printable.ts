import { describeAuth } from '../api/auth.ts';
import { describeDeclared } from '../api/declared-contract.ts';
import { responseFormatsNotChecked } from '../api/schema-formats.ts';
import { publicTarget } from './base-url.ts';
import type { RunConfig } from './run.ts';

/**
 * The configuration as `--print-config` shows it: what a person checks before a run, in the terms
 * result.json later records (the workload as it will run, the plan's windows as the target counts
 * them). No key and no minting seed: each appears as where it comes from.
 */
export function printable(config: RunConfig): Record<string, unknown> {
  return {
    scenario: config.scenario.name,
    workload: { kind: config.workload.kind, ...config.workload.describe },
    plan: config.planName,
    windows: config.windows,
    timeScale: config.timeScale,
    thresholds: config.thresholds.map((t) => t.expression),
    enforce: config.enforce,
    allowBanRisk: config.allowBanRisk,
    limiter: config.limiter ?? 'learned from the 429s',
    contract: config.contract,
    ...(config.contract === 'document' ? { declaredContract: declaredContract(config) } : {}),
    timeoutMs: config.timeoutMs,
    maxAttempts: config.maxAttempts,
    refusalStatuses: config.refusalStatuses,
    target: config.baseUrl ? publicTarget(config.baseUrl) : 'embedded reference server',
    spec: config.specLabel,
    ...responseFormatsNotChecked(config.spec.operations),
    apiKey: config.apiKey ?? 'none',
    ...(config.authHeader ? { authHeader: describeAuth(config.authHeader) } : {}),
    network: config.network.printable,
    auth: Object.fromEntries(
      [...config.auth].map(([id, placement]) => [id, `${describeAuth(placement)} (${placement.from})`]),
    ),
    ...(config.tenants ? { tenantKeys: tenantKeys(config) } : {}),
    seed: config.seedGiven ? config.seed : 'drawn at random by each run (give --seed N to repeat one)',
    workers: config.workers,
    ...(config.shard ? { shard: `${config.shard.index}/${config.shard.count}` } : {}),
    ...(config.quotaStore ? { quotaStore: config.quotaStore.label, storeOutage: config.storeOutage } : {}),
    ...(config.fleet
      ? {
          fleet: {
            name: config.fleet.name,
            generators: config.fleet.generators,
            index: config.fleet.index ?? 'the lowest free one, claimed in the store at start',
            indexFrom: config.fleet.indexFrom,
            waitMs: config.fleet.waitMs,
            ttlSeconds: config.fleet.ttlSeconds,
          },
        }
      : {}),
    ...(config.metrics
      ? {
          metrics: {
            sinks: config.metrics.sinks.map((s) => `${s.kind} ${s.host}`),
            intervalMs: config.metrics.intervalMs,
          },
        }
      : {}),
    checkpointMs: config.checkpointMs,
    ...(config.baseline
      ? { baseline: { file: config.baseline.file, maxRegression: config.baseline.maxRegression } }
      : {}),
    outputs: config.outputs,
    // What the run would say first on stderr (a scenario loaded through sucrase, a shard's share).
    ...(config.warnings.length > 0 ? { warnings: config.warnings } : {}),
  };
}

/** What the document promises per operation and status, as the checks will read it: `{ '200': 'ietf-7 (RateLimit)' }`. */
function declaredContract(config: RunConfig): Record<string, Record<string, string>> {
  return Object.fromEntries(
    config.spec.operations.map((op) => [
      op.id,
      Object.fromEntries([...op.declared.byStatus].map(([status, d]) => [status, describeDeclared(d)])),
    ]),
  );
}

function tenantKeys(config: RunConfig): unknown {
  const tenants = config.tenants;
  if (!tenants || tenants.minted) return 'minted by the embedded server';
  return Object.fromEntries(tenants.mix.groups.map((g) => [g.name, `from --tenants ${tenants.file}`]));
}
