import { shortestWindow } from '../api/plans.ts';
import { describeHeaderDialect } from '../record/dialects.ts';
import { describeTransportErrors, errorCount } from '../record/errors.ts';
import { describeHeldByLimiter } from '../report/held-by-limiter.ts';
import { describeNetwork } from '../report/network.ts';
import { partialReason } from '../report/partial-reason.ts';
import { admittedRate } from '../report/quota.ts';
import { describeRefusals, noteLine, refusalNotes, refusalStatuses } from '../report/refusals.ts';
import { describeHeldPastEnd, heldMostLine } from '../report/server-holds.ts';
import { describeStoreOutage } from '../report/store-outages.ts';
import { verdictLines, verdictOf } from '../report/verdict.ts';
import { wallTimeLine } from '../report/wall-time.ts';
import type { IsolationVerdict, LimiterSeen, RunResult, TierSummary } from '../result/types.ts';
import { describeP } from '../stats/isolation.ts';

const pad = (text: string, width: number, right = false) =>
  right ? text.padStart(width) : text.padEnd(width);
const fmt = (n: number, digits = 1) => (Number.isInteger(n) ? String(n) : n.toFixed(digits));
/** A wait in seconds to a tenth, as the summary states them (`244 s`, `1.5 s`, `0 s`). */
const seconds = (ms: number) => `${fmt(Math.round(ms / 100) / 10)} s`;

/** The end-of-run table: per operation and overall, then checks and compliance in a few lines. */
export function formatSummary(result: RunResult, resultPath: string | undefined): string {
  const m = result.meta;
  return [
    `${m.scenario} against ${m.target}${m.embeddedTarget ? ' (embedded reference server)' : ''}, plan ${m.plan}, ${fmt(m.durationSeconds)} s${m.fleet ? `, fleet ${m.fleet.name} of ${m.fleet.generators} generators` : ''}${m.partial ? ` (PARTIAL: ${partialReason(m)})` : ''}`,
    ...describeNetwork(result),
    ...[wallTimeLine(result) ?? []].flat(),
    ...operationTable(result),
    ...tierLines(result),
    ...(result.isolation ? isolationLines(result.isolation) : []),
    ...complianceLines(result),
    ...checkLines(result),
    ...workloadLines(result),
    ...thresholdLines(result),
    ...probeLines(result),
    ...(Object.values(result.operations).some((o) => o.deprecated) ? ['* deprecated operation'] : []),
    // The thresholds are listed above with their figures: their verdict's headline is enough here.
    ...verdictLines(verdictOf(result), !result.thresholds?.length),
    writtenLine(m, resultPath),
  ].join('\n');
}

function writtenLine(m: RunResult['meta'], path: string | undefined): string {
  if (m.fleet)
    return path
      ? `fleet ${m.fleet.name}'s result written to ${path}`
      : `fleet ${m.fleet.name}'s result.json and report.html are written by the generator that merged first, to its --out`;
  return path ? `result written to ${path}` : 'result not written (see the line on stderr)';
}

const COLUMNS = [
  'operation',
  'count',
  'rate/s',
  'p50 ms',
  'p95 ms',
  'p99 ms',
  '429s',
  'errors',
  'failed checks',
];
const WIDTHS = [22, 8, 8, 8, 8, 8, 6, 7, 13];
/** The column counts every refusal: headed `429s` when each was one, as the quota line names the rest. */
const REFUSED_AT = COLUMNS.indexOf('429s');

function operationTable(result: RunResult): string[] {
  const columns = [...COLUMNS];
  const widths = [...WIDTHS];
  if (refusalStatuses(result.compliance) !== undefined) {
    columns[REFUSED_AT] = 'refused';
    widths[REFUSED_AT] = 'refused'.length;
  }
  const row = (name: string, s: RunResult['overall']) =>
    [
      name,
      String(s.requests),
      fmt(s.rate),
      fmt(s.service.p50, 2),
      fmt(s.service.p95, 2),
      fmt(s.service.p99, 2),
      String(s.rateLimited),
      String(errorCount(s)),
      String(s.checkFailures),
    ]
      .map((c, i) => pad(c, widths[i] as number, i > 0))
      .join(' ');
  const lines = [columns.map((h, i) => pad(h, widths[i] as number, i > 0)).join(' ')];
  for (const [id, s] of Object.entries(result.operations)) lines.push(row(id + (s.deprecated ? '*' : ''), s));
  lines.push(row('all', result.overall));
  const transport = describeTransportErrors(result.overall.transportErrors);
  if (transport) lines.push(`transport errors: ${transport}`);
  return lines;
}

/**
 * What the client waited for, each part named by what held it. Enforced, the pacer holds sends to
 * the plan's quota: that is pacing. The server's told budget (its Remaining spent, until its Reset)
 * is the server's hold, not the plan's, and is named with the fields that told it. Raw mode paces no
 * quota: the rest of what it waited is the ban guard (requests in flight where the server tells no
 * budget) and, only where refusals came, the spacing and caps they taught.
 */
function waitedText(result: RunResult): string {
  const c = result.compliance;
  const backoff = `${seconds(c.backoffWaitMs)} backoff`;
  const budget = Math.min(c.budgetWaitMs ?? 0, c.pacingWaitMs);
  const rest = c.pacingWaitMs - budget;
  const told =
    budget > 0
      ? `${seconds(budget)} held by the server's told budget${c.budgetHold ? ` (${c.budgetHold.fields})` : ''}`
      : undefined;
  if (result.config.enforce)
    return `waited ${[`${seconds(rest)} pacing`, told, backoff].filter(Boolean).join(', ')}`;
  const taught = c.rateLimited + (c.unexplained ?? 0) > 0 ? ' and what refusals taught' : '';
  // Under the told budget all along, the ban guard's own share is no news.
  const guard = told && rest < 50 ? undefined : `${seconds(rest)} for the ban guard${taught}`;
  return `waited ${[told, guard, backoff].filter(Boolean).join(', ')} (raw mode paces no quota)`;
}

/**
 * Raw mode with no limiter learned or given: the line would only state the spacing's floor as a gap
 * "kept between sends", which reads as the pacing raw mode does not do.
 */
const nothingLearned = (l: LimiterSeen) =>
  l.model === 'unknown' && !l.given && l.rateCuts === 0 && l.maxInFlight === undefined;

function complianceLines(result: RunResult): string[] {
  const lines: string[] = [];
  const c = result.compliance;
  const shortest = shortestWindow(result.config.windows);
  // A tenant mix's windows are each tier's, in the table above: the run's plan only paced setup.
  const mix = result.byPlan !== undefined || result.byTenantGroup !== undefined;
  if (shortest && !mix) {
    // Whole windows the run lasted: it crossed at least this many resets, whatever their phase.
    const windows = Math.floor(result.meta.durationSeconds / shortest.seconds);
    lines.push(
      `plan window: ${shortest.limit} requests per ${fmt(shortest.seconds)} s${result.config.timeScale !== 1 ? ` (time scale ${result.config.timeScale})` : ''}; the run lasted ${windows} whole window${windows === 1 ? '' : 's'}`,
    );
  }
  lines.push(
    `quota: ${(c.quotaUtilization * 100).toFixed(1)}% of ${mix ? "the tenants' plan rates" : 'what the plan admits'} (${fmt(admittedRate(result), 2)}/s) used; ${describeRefusals(c)}; retries ${c.retries}; violations ${c.violations}; ${waitedText(result)}`,
  );
  lines.push(...refusalNotes(c).map(noteLine));
  if (c.headerDialect) lines.push(`rate-limit headers: ${describeHeaderDialect(c.headerDialect)}`);
  if (c.limiter && !(result.config.enforce === false && nothingLearned(c.limiter)))
    lines.push(`limiter: ${describeLimiter(c.limiter)}`);
  if (c.heldByLimiter) lines.push(describeHeldByLimiter(c.heldByLimiter));
  if (c.heldPastEnd) lines.push(`${describeHeldPastEnd(c.heldPastEnd)}: the run ended first`);
  const most = heldMostLine(result);
  if (most) lines.push(most);
  for (const o of c.storeOutages ?? []) lines.push(describeStoreOutage(o));
  return lines;
}

function checkLines(result: RunResult): string[] {
  const failed = result.checks.filter((ch) => ch.failures > 0);
  const total = result.checks.reduce((n, ch) => n + ch.passes + ch.failures, 0);
  return [
    failed.length === 0
      ? `checks: all ${result.checks.length} passed (${total} evaluations)`
      : `checks: ${failed.length} failing:`,
    ...failed.map(
      (ch) =>
        `  ${ch.id}: ${ch.failures} failed, e.g. ${ch.samples[0]?.operation} ${ch.samples[0]?.status}: ${ch.samples[0]?.detail}`,
    ),
    ...(result.config.formatsNotChecked
      ? [`formats not checked: ${result.config.formatsNotChecked.join(', ')}`]
      : []),
    ...notDeclaredLine(result),
  ];
}

/** The responses the document promised nothing of, per check: judged by no rule, and said so. */
function notDeclaredLine(result: RunResult): string[] {
  const unjudged = result.checks.filter((ch) => (ch.notDeclared ?? 0) > 0);
  if (unjudged.length === 0) return [];
  return [
    `not declared by the document (not judged): ${unjudged.map((ch) => `${ch.id} on ${ch.notDeclared} responses`).join(', ')}`,
  ];
}

function workloadLines(result: RunResult): string[] {
  const w = result.workload;
  const lines = [`iterations ${w.iterations} (failed ${w.failedIterations}, dropped ${w.droppedIterations})`];
  for (const [name, f] of Object.entries(w.flows))
    if (f.firstError) lines.push(`  flow ${name}: ${f.failures} failed, first: ${f.firstError}`);
  return lines;
}

function thresholdLines(result: RunResult): string[] {
  const thresholds = result.thresholds ?? [];
  if (thresholds.length === 0) return [];
  const failing = thresholds.filter((t) => !t.passed);
  return [
    failing.length === 0
      ? `thresholds: all ${thresholds.length} passed`
      : `thresholds: ${failing.length} of ${thresholds.length} FAILED`,
    ...thresholds.map((t) =>
      t.passed
        ? `  ok    ${t.expression} (${t.actual})`
        : `  FAIL  ${t.expression}: ${t.detail}${t.aborted ? ' (ended the run)' : ''}`,
    ),
  ];
}

function probeLines(result: RunResult): string[] {
  const probes = result.probes ?? [];
  if (probes.length === 0) return [];
  const failing = probes.filter((p) => !p.passed).length;
  const width = Math.max(...probes.map((p) => p.id.length));
  return [
    failing === 0 ? `probes: all ${probes.length} passed` : `probes: ${failing} of ${probes.length} FAILED`,
    ...probes.map(
      (p) =>
        `  ${p.passed ? 'ok  ' : 'FAIL'}  ${p.id.padEnd(width)}  expected ${p.expected}; got ${p.actual}${p.detail && !p.passed ? ` (${p.detail})` : ''}`,
    ),
  ];
}

const share = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * A tenant mix's tiers side by side: each plan (its unnamed groups), then each named group marked as
 * such. Utilisation is the tier's, then its spread across keys (min/p50/max). Nothing without a mix.
 */
function tierLines(result: RunResult): string[] {
  const rows: [string, TierSummary][] = [
    ...Object.entries(result.byPlan ?? {}),
    ...Object.entries(result.byTenantGroup ?? {}).map(([name, t]): [string, TierSummary] => [
      `${name} (group${t.enforce ? '' : ', raw'})`,
      t,
    ]),
  ];
  if (rows.length === 0) return [];
  // Response time, as the tiers' thresholds read it (the operations above show service time).
  const header = [
    'tier',
    'keys',
    'requests',
    'rate/s',
    'p50 resp',
    'p99 resp',
    '429s',
    'violations',
    'errors',
  ];
  const widths = [Math.max(22, ...rows.map(([name]) => name.length)), 9, 9, 8, 8, 8, 6, 10, 7, 7, 19];
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] as number, i > 0)).join(' ');
  const out = [line([...header, 'util', 'keys min/p50/max'])];
  for (const [name, t] of rows) {
    const u = t.utilization;
    out.push(
      line([
        name,
        `${t.keysSeen}/${t.keys}`,
        String(t.requests),
        fmt(t.rate),
        fmt(t.response.p50, 2),
        fmt(t.response.p99, 2),
        String(t.rateLimited),
        String(t.violations),
        String(t.errors),
        share(u.overall),
        `${share(u.min)}/${share(u.p50)}/${share(u.max)}`,
      ]),
    );
  }
  return out;
}

/** The noisy-neighbour verdict, then per tier its compliant tenants before -> after the noise. */
function isolationLines(v: IsolationVerdict): string[] {
  const out = [
    `isolation: ${v.passed ? 'PASS' : 'FAIL'} (${v.noisyGroups.join(', ')} from ${fmt(v.noisyFromMs / 1000)} s): ${v.detail}`,
  ];
  const tiers = Object.entries(v.tiers);
  const width = Math.max(0, ...tiers.map(([plan]) => plan.length));
  for (const [plan, t] of tiers) {
    const { before: b, after: a } = t;
    out.push(
      `  ${t.passed ? 'ok  ' : 'FAIL'}  ${plan.padEnd(width)}  requests ${b.requests} -> ${a.requests}, p50 ${fmt(b.p50Ms, 2)} -> ${fmt(a.p50Ms, 2)} ms, p99 ${fmt(b.p99Ms, 2)} -> ${fmt(a.p99Ms, 2)} ms, 429s ${b.rateLimited} -> ${a.rateLimited}, errors ${b.errors} -> ${a.errors}, p ${describeP(t.pValue)}${t.reason ? `: ${t.reason}` : ''}`,
    );
  }
  return out;
}

/** One line saying why a run failed its gate (thresholds, baseline), or undefined when it did not. */
export function failureLine(result: RunResult): string | undefined {
  const parts: string[] = [];
  const failed = (result.thresholds ?? []).filter((t) => !t.passed);
  if (failed.length > 0)
    parts.push(
      `${failed.length} threshold${failed.length === 1 ? '' : 's'} failed: ${failed.map((t) => t.expression).join(', ')}`,
    );
  const probes = (result.probes ?? []).filter((p) => !p.passed);
  if (probes.length > 0)
    parts.push(
      `${probes.length} probe${probes.length === 1 ? '' : 's'} failed: ${probes.map((p) => p.id).join(', ')}`,
    );
  const regressions = result.baseline?.regressions ?? [];
  if (regressions.length > 0)
    parts.push(
      `${regressions.length} regression${regressions.length === 1 ? '' : 's'} against ${result.baseline?.file}: ${regressions.map((r) => `${r.operation} ${r.metric}`).join(', ')}`,
    );
  if (result.isolation && !result.isolation.passed)
    parts.push(`isolation broken: ${result.isolation.detail}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** 'gcra (learned from a 429 at the plan's spacing): 1025 ms kept between sends; ...' */
function describeLimiter(l: LimiterSeen): string {
  const learnedFrom =
    l.model === 'concurrency'
      ? 'learned from 429s that came while others of the key were in flight'
      : "learned from a 429 at the plan's spacing";
  const model =
    l.model === 'unknown' ? 'not known' : `${l.model} (${l.given ? 'given with --limiter' : learnedFrom})`;
  const gap = l.gapMs > 0 ? `; ${fmt(l.gapMs, 0)} ms kept between sends` : '';
  const cuts =
    l.rateCuts > 0
      ? `; the rate halved ${l.rateCuts} time${l.rateCuts === 1 ? '' : 's'} by 429s that told no wait`
      : '';
  const inFlight =
    l.maxInFlight === undefined
      ? ''
      : `; at most ${l.maxInFlight} request${l.maxInFlight === 1 ? '' : 's'} of the key in flight${l.inFlightCuts ? ` (${l.inFlightCuts} 429${l.inFlightCuts === 1 ? '' : 's'} lowered it)` : ''}`;
  return `${model}${gap}${cuts}${inFlight}`;
}
