import { InputError } from '../api/input-error.ts';
import { mostAdmitted } from '../api/plan-admits.ts';
import {
  type Compliance,
  type OperationInfo,
  type OperationSummary,
  type ResultMeta,
  type RunConfig,
  type RunResult,
  SCHEMA_VERSION,
} from '../result/types.ts';
import { mergeQuota } from './merge-quota.ts';
import {
  mergeChecks,
  mergeHeaderDialects,
  mergeHeldByLimiter,
  mergeLimiters,
  mergeStoreOutages,
  mergeViolationSamples,
  mergeWorkloads,
} from './merge-records.ts';
import { mergeRefusalStatuses, mergeRefusals } from './merge-refusals.ts';
import { mergeSummaries } from './merge-summary.ts';
import { mergeIsolation, mergeTiers } from './merge-tenants.ts';
import { mergeOperationTimelines, mergeTimelines } from './merge-timeline.ts';
import { runSpan } from './run-span.ts';

/**
 * One result from the results of several runs or workers: the same scenario from several processes
 * at once, or one run after another. Counters add up, histograms are added (exact percentiles of all
 * samples), timelines and each key's quota over time meet on the wall clock, and rates are per second of the time when at least one
 * part ran (merge-summary.ts). A tenant mix's tiers add up key by key and its isolation verdict is
 * judged again on the added stretches (merge-tenants.ts). `thresholds` are dropped: they were
 * verdicts on the parts.
 *
 * Refused, as an InputError naming the result (by `labels`, file names from the CLI):
 * - a schemaVersion other than 1: its fields may mean something else.
 * - different plans or plan windows (time scale included): the compliance figures measure one quota;
 *   concurrent workers on one key share it, so the merged result keeps the plan's rate and reads the
 *   utilisation as all admitted requests against it. Sums over different quotas measure nothing.
 * - different targets: the histograms would mix two servers' latencies into one distribution no one
 *   can act on. Embedded reference servers are the exception: each run starts its own on a free port.
 * Different scenarios may be merged (several workers driving different mixes at one target);
 * meta.scenario then lists them.
 */
export function mergeResults(results: RunResult[], labels: string[] = []): RunResult {
  const parts = orderedParts(results, labels);
  const first = parts[0] as Part;
  const start = first.start;
  const end = Math.max(...parts.map((p) => p.end));
  const covered = coveredSeconds(parts);

  const overall = mergeSummaries(
    parts.map((p) => ({ summary: p.result.overall, seconds: p.seconds, where: `${p.label}: overall` })),
    covered,
  );
  // The steps that may refuse a part (a histogram that does not decode) run in this order, so that
  // a result with several faults is refused for the same one every time.
  const operations = mergeOperations(parts, covered);
  const compliance = mergeCompliance(parts, overall, start, covered);
  const windows = first.result.config.windows;
  const quota = mergeQuota(
    parts.map((p) => ({ quota: p.result.quota, start: p.start })),
    start,
    windows.length > 0 ? Math.min(...windows.map((w) => w.seconds)) : undefined,
  );
  const tenants = mergeTenantFigures(parts, covered);
  const operationTimelines = mergeOperationTimelines(
    parts.map((p) => ({ operationTimelines: p.result.operationTimelines, start: p.start })),
    start,
  );
  return {
    schemaVersion: SCHEMA_VERSION,
    meta: mergeMeta(
      parts.map((p) => p.result),
      start,
      end,
    ),
    config: mergeConfig(parts.map((p) => p.result.config)),
    overall,
    operations,
    timeline: mergeTimelines(
      parts.map((p) => ({ timeline: p.result.timeline, start: p.start })),
      start,
    ),
    ...(operationTimelines ? { operationTimelines } : {}),
    ...(quota ? { quota } : {}),
    checks: mergeChecks(parts.map((p) => p.result.checks)),
    compliance,
    workload: mergeWorkloads(parts.map((p) => p.result.workload)),
    ...tenants,
  };
}

/** One result to merge, named by its label, with its span. */
type Part = { result: RunResult; label: string } & ReturnType<typeof runSpan>;

/**
 * The results checked against each other, earliest first: "the first" result's config and
 * versions, and the earliest samples, whatever order the files were named in.
 */
function orderedParts(results: RunResult[], labels: string[]): Part[] {
  if (results.length === 0) throw new InputError('merge: no results to merge');
  const label = (i: number) => labels[i] ?? `result ${i + 1}`;
  refuseOtherVersions(results, label);
  refuseMismatches(results, label);
  return results
    .map((result, i) => ({ result, label: label(i), ...runSpan(result) }))
    .sort((a, b) => a.start - b.start);
}

/** The parts' compliance figures: counts add up, utilisation is of the time covered, records merge. */
function mergeCompliance(
  parts: Part[],
  overall: OperationSummary,
  start: number,
  covered: number,
): Compliance {
  const first = (parts[0] as Part).result;
  const planRate = first.compliance.planRate;
  // As build.ts measures it: a tenant mix against every key's rate, a run against its plan's windows.
  const most = first.byPlan ? planRate * covered : mostAdmitted(first.config.windows, covered * 1000);
  const admitted = parts.reduce((n, p) => n + p.result.compliance.admitted, 0);
  const headerDialect = mergeHeaderDialects(parts.map((p) => p.result.compliance.headerDialect));
  const limiter = mergeLimiters(parts.map((p) => p.result.compliance.limiter));
  const heldByLimiter = mergeHeldByLimiter(
    parts.map((p) => ({
      held: p.result.compliance.heldByLimiter,
      service: p.result.overall.service,
      serviceHistogram: p.result.overall.histograms.service,
      where: p.label,
    })),
  );
  const storeOutages = mergeStoreOutages(
    parts.map((p) => ({ outages: p.result.compliance.storeOutages, start: p.start })),
    start,
  );
  return {
    rateLimited: overall.rateLimited,
    rateLimitedRate: overall.rateLimitedRate,
    retries: overall.retries,
    violations: parts.reduce((n, p) => n + p.result.compliance.violations, 0),
    violationSamples: mergeViolationSamples(parts.map((p) => p.result.compliance.violationSamples)),
    pacingWaitMs: overall.pacingWaitMs,
    backoffWaitMs: overall.backoffWaitMs,
    ...mergeBudgetWaits(parts.map((p) => p.result.compliance)),
    admitted,
    planRate,
    quotaUtilization: most > 0 ? admitted / most : 0,
    ...mergeRefusals(parts.map((p) => p.result.compliance)),
    ...(headerDialect ? { headerDialect } : {}),
    ...(limiter ? { limiter } : {}),
    ...(storeOutages ? { storeOutages } : {}),
    ...(heldByLimiter ? { heldByLimiter } : {}),
  };
}

/**
 * The waits under the server's told budget add up, as the pacing waits they are part of; its hold
 * of the key is the longest any part saw (parts share a key's time, or hold keys of their own).
 */
function mergeBudgetWaits(parts: Compliance[]): Pick<Compliance, 'budgetWaitMs' | 'budgetHold'> {
  const budgetWaitMs = parts.reduce((n, c) => n + (c.budgetWaitMs ?? 0), 0);
  let budgetHold: Compliance['budgetHold'];
  for (const c of parts)
    if (c.budgetHold && c.budgetHold.ms > (budgetHold?.ms ?? 0)) budgetHold = c.budgetHold;
  return {
    ...(budgetWaitMs > 0 ? { budgetWaitMs } : {}),
    ...(budgetHold ? { budgetHold: { ...budgetHold } } : {}),
  };
}

/** A result of another schema version may mean something else by its fields: refused, by its label. */
function refuseOtherVersions(results: RunResult[], label: (i: number) => string): void {
  results.forEach((r, i) => {
    if (r.schemaVersion !== SCHEMA_VERSION)
      throw new InputError(
        `${label(i)}: schemaVersion ${JSON.stringify(r.schemaVersion)}; merge reads schemaVersion ${SCHEMA_VERSION} only`,
      );
  });
}

/** Each operation's figures over the parts that sent it; its description from the earliest of them. */
function mergeOperations(
  parts: { result: RunResult; label: string; seconds: number }[],
  covered: number,
): Record<string, OperationSummary & OperationInfo> {
  const operations: Record<string, OperationSummary & OperationInfo> = {};
  const ids = [...new Set(parts.flatMap((p) => Object.keys(p.result.operations)))];
  for (const id of ids) {
    const having = parts.filter((p) => id in p.result.operations);
    const { method, path, deprecated, stability } = (having[0] as (typeof parts)[number]).result.operations[
      id
    ] as OperationInfo;
    const summary = mergeSummaries(
      having.map((p) => ({
        summary: p.result.operations[id] as OperationSummary,
        seconds: p.seconds,
        where: `${p.label}: operations.${id}`,
      })),
      covered,
    );
    operations[id] = { method, path, deprecated, stability, ...summary };
  }
  return operations;
}

/** A tenant mix's tiers and isolation verdict, when any part has them (merge-tenants.ts). */
function mergeTenantFigures(
  parts: { result: RunResult; label: string; seconds: number }[],
  covered: number,
): Pick<RunResult, 'byPlan' | 'byTenantGroup' | 'isolation'> {
  const tiers = (field: 'byPlan' | 'byTenantGroup') =>
    mergeTiers(
      parts.map((p) => ({ tiers: p.result[field], seconds: p.seconds, where: `${p.label}: ${field}` })),
      covered,
    );
  const byPlan = tiers('byPlan');
  const byTenantGroup = tiers('byTenantGroup');
  const isolation = mergeIsolation(
    parts.map((p) => ({ isolation: p.result.isolation, where: `${p.label}: isolation` })),
  );
  return {
    ...(byPlan ? { byPlan } : {}),
    ...(byTenantGroup ? { byTenantGroup } : {}),
    ...(isolation ? { isolation } : {}),
  };
}

function refuseMismatches(results: RunResult[], label: (i: number) => string): void {
  const [first] = results as [RunResult];
  const windows = JSON.stringify(first.config.windows.map(({ limit, seconds }) => ({ limit, seconds })));
  results.forEach((r, i) => {
    if (
      r.meta.plan !== first.meta.plan ||
      JSON.stringify(r.config.windows.map(({ limit, seconds }) => ({ limit, seconds }))) !== windows
    ) {
      throw new InputError(
        `${label(i)}: plan ${r.meta.plan} (${describeWindows(r)}) differs from ${label(0)}'s ${first.meta.plan} (${describeWindows(first)}): quota figures of different plans cannot be merged`,
      );
    }
    const bothEmbedded = r.meta.embeddedTarget && first.meta.embeddedTarget;
    if (!bothEmbedded && r.meta.target !== first.meta.target) {
      throw new InputError(
        `${label(i)}: target ${r.meta.target} differs from ${label(0)}'s ${first.meta.target}: latencies of different targets are not one distribution`,
      );
    }
  });
}

const describeWindows = (r: RunResult) =>
  r.config.windows.map((w) => `${w.limit}/${Number(w.seconds.toFixed(3))}s`).join(', ') || 'no windows';

/** Seconds when at least one part ran: the union of their spans. */
function coveredSeconds(parts: { start: number; end: number; seconds: number }[]): number {
  let total = 0;
  let from = Number.NEGATIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  // Parts come sorted by start; a part shorter than a millisecond counts as one, as build.ts does.
  for (const p of parts) {
    const end = Math.max(p.end, p.start + 1);
    if (p.start > to) {
      if (to > from) total += to - from;
      from = p.start;
      to = end;
    } else to = Math.max(to, end);
  }
  if (to > from) total += to - from;
  return total / 1000;
}

const unique = <T>(values: T[]) => [...new Set(values)];

/** Meta of the union: earliest start, latest end, partial if any part was, the scenarios listed. */
function mergeMeta(results: RunResult[], start: number, end: number): ResultMeta {
  const [first] = results as [RunResult];
  if (results.length === 1) return structuredClone(first.meta);
  const notes = [`merged from ${results.length} results`];
  const tools = unique(results.map((r) => r.meta.toolVersion));
  const nodes = unique(results.map((r) => r.meta.nodeVersion));
  if (tools.length > 1) notes.push(`tool versions ${tools.join(', ')}`);
  if (nodes.length > 1) notes.push(`Node ${nodes.join(', ')}`);
  const descriptions = unique(results.flatMap((r) => (r.meta.description ? [r.meta.description] : [])));
  const interruptedBy = results.find((r) => r.meta.partial && r.meta.interruptedBy)?.meta.interruptedBy;
  return {
    tool: 'petstore-load',
    toolVersion: first.meta.toolVersion,
    nodeVersion: first.meta.nodeVersion,
    scenario: unique(results.map((r) => r.meta.scenario)).join(', '),
    description: [...descriptions, `(${notes.join('; ')})`].join(' '),
    target: first.meta.target,
    embeddedTarget: first.meta.embeddedTarget,
    plan: first.meta.plan,
    startedAt: new Date(start).toISOString(),
    endedAt: new Date(end).toISOString(),
    durationSeconds: Math.round(Math.max(0.001, (end - start) / 1000) * 1000) / 1000,
    partial: results.some((r) => r.meta.partial),
    ...(interruptedBy ? { interruptedBy } : {}),
    // A part that is a checkpoint makes the whole one: its run may have gone on past it.
    ...(results.some((r) => r.meta.checkpoint) ? { checkpoint: true } : {}),
    ...longestPhases(results),
  };
}

/** Parts that ran side by side (threads, a fleet) wait for one setup and one teardown: the longest part's. */
function longestPhases(results: RunResult[]): Pick<ResultMeta, 'setupSeconds' | 'teardownSeconds'> {
  const longest = (pick: (m: ResultMeta) => number | undefined) => {
    const spans = results.flatMap((r) => (pick(r.meta) === undefined ? [] : [pick(r.meta) as number]));
    return spans.length > 0 ? Math.max(...spans) : undefined;
  };
  const setupSeconds = longest((m) => m.setupSeconds);
  const teardownSeconds = longest((m) => m.teardownSeconds);
  return {
    ...(setupSeconds === undefined ? {} : { setupSeconds }),
    ...(teardownSeconds === undefined ? {} : { teardownSeconds }),
  };
}

/**
 * The earliest part's; its seed only when every part had it, since a seed promises a replay; the
 * refusal statuses of all parts, since the merged refusals count each part's.
 */
function mergeConfig(configs: RunConfig[]): RunConfig {
  const { seed, refusalStatuses: _, ...config } = structuredClone(configs[0] as RunConfig);
  return {
    ...config,
    ...mergeRefusalStatuses(configs),
    ...(configs.every((c) => c.seed === seed) && seed !== undefined ? { seed } : {}),
  };
}
