import { errorCount } from '../record/errors.ts';
import type { RunResult, TierSummary } from '../result/types.ts';
import { describeP } from '../stats/isolation.ts';
import { describeHeldByLimiter } from './held-by-limiter.ts';
import { UNVERIFIED_LINE } from './network.ts';
import { partialReason } from './partial-reason.ts';
import { refusalNotes, refusalStatuses } from './refusals.ts';
import { heldMostLine } from './server-holds.ts';
import { type VerdictPart, verdictOf } from './verdict.ts';

/**
 * Text into markdown: a pipe or a line break from a server's text must not break a table, and its
 * markup (HTML tags, emphasis, links, code) must show as text rather than render.
 */
function cell(text: string | number): string {
  return String(text)
    .replace(/[\\`*_[\]<>|]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : `\\${c}`))
    .replace(/\r?\n/g, ' ');
}

/** A code span: markup inside one shows as text already; only pipes (tables) and backticks need care. */
function code(text: string): string {
  const inner = text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  return inner.includes('`') ? `\`\` ${inner} \`\`` : `\`${inner}\``;
}

const pct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.001 ? 3 : 1)}%`;
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

/**
 * A markdown summary for a CI job's page (GitHub's step summary renders it): the verdict first,
 * then the figures a reviewer checks, then what failed and why.
 */
export function renderSummaryMarkdown(result: RunResult): string {
  const { meta, compliance } = result;
  const lines: string[] = [...headline(result)];
  // The 429 figures count every refusal of the limiter: headed 429s only when each one was.
  const statuses = refusalStatuses(compliance);
  const refused = statuses === undefined ? '429s' : 'refused';
  if (meta.partial) lines.push('', `> Partial run: ${cell(partialReason(meta))}.`);
  if (result.config.network?.insecure) lines.push('', `> ${cell(UNVERIFIED_LINE)}.`);
  lines.push(
    '',
    `Plan **${cell(meta.plan)}** against ${code(meta.target)}${meta.embeddedTarget ? ' (embedded reference server)' : ''}, ${meta.durationSeconds} s from ${meta.startedAt}.`,
    '',
    ...(result.capacity ? capacityFigures(result) : runFigures(result, refused, statuses)),
  );
  for (const n of refusalNotes(compliance))
    lines.push('', `> **${n.lead}: ${n.count}** — ${cell(n.why)}; ${code(n.flag)} ${cell(n.effect)}.`);
  // A capacity probe's plans each have their own model (a queue among them), in their verdicts.
  if (compliance.heldByLimiter && !result.capacity)
    lines.push('', cell(describeHeldByLimiter(compliance.heldByLimiter)));
  const heldMost = heldMostLine(result);
  if (heldMost) lines.push('', `> ${cell(heldMost)}`);
  lines.push(...gateTables(result));
  lines.push(
    '',
    `| operation | requests | rate | p50 | p99 | ${refused} | errors | checks failed |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const [id, op] of Object.entries(result.operations)) {
    const badge = op.deprecated
      ? ' _(deprecated)_'
      : op.stability !== 'stable'
        ? ` _(${cell(op.stability)})_`
        : '';
    lines.push(
      `| ${cell(id)}${badge} | ${op.requests} | ${op.rate.toFixed(1)}/s | ${ms(op.response.p50)} | ${ms(op.response.p99)} | ${op.rateLimited} | ${errorCount(op)} | ${op.checkFailures} |`,
    );
  }
  lines.push(...tierTable(result));
  const failing = result.checks.filter((c) => c.failures > 0);
  if (failing.length > 0) {
    lines.push('', '**Failed checks**', '');
    for (const c of failing) {
      const sample = c.samples[0];
      lines.push(
        `- ${code(c.id)}: ${c.failures} of ${c.passes + c.failures}: ${cell(c.rule)}${sample ? ` (e.g. ${cell(sample.operation)} ${sample.status}: ${cell(sample.detail)})` : ''}`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

/** A paced run's figures: the rate, and the quota it used of its plan. */
function runFigures(result: RunResult, refused: string, statuses: string | undefined): string[] {
  const { overall, compliance } = result;
  return [
    `| requests | rate | p50 | p95 | p99 | ${refused} | errors | checks failed | quota used | violations |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${overall.requests} | ${overall.rate.toFixed(1)}/s | ${ms(overall.response.p50)} | ${ms(overall.response.p95)} | ${ms(overall.response.p99)} | ${overall.rateLimited} (${pct(overall.rateLimitedRate)}${statuses === undefined ? '' : `; ${statuses}`}) | ${errorCount(overall)} | ${overall.checkFailures} | ${pct(compliance.quotaUtilization)} | ${compliance.violations} |`,
  ];
}

/**
 * A capacity probe drove every plan's key to its limit and past it: no run-wide rate or quota of
 * one plan means anything, so each plan's figures stand in a row of their own.
 */
function capacityFigures(result: RunResult): string[] {
  const show = (v: number | null | undefined) => (v === null || v === undefined ? '—' : String(v));
  return [
    '| plan | window (scaled) | accepted per window | first 429 at | reset error ms | model | verdict |',
    '|---|---:|---:|---:|---:|---|---|',
    ...(result.capacity ?? []).map(
      (r) =>
        `| ${cell(r.plan)} | ${r.window.limit} / ${r.window.seconds} s | ${r.rate.acceptedPerWindow.join(', ') || '—'} | ${r.exhaust.first429At ?? 'none'} (want ${r.exhaust.expected429At}) | ${show(r.recovery.resetErrorMs)} | ${cell(r.limiter.type)} | ${r.verdict === 'pass' ? '✅ pass' : `❌ ${cell(r.reasons.join('; ') || 'fail')}`} |`,
    ),
  ];
}

/** The verdict line, as every output words it (verdict.ts), and its parts beneath. */
function headline(result: RunResult): string[] {
  const v = verdictOf(result);
  const icon = (passed: boolean) => (passed ? '✅' : '❌');
  const part = (p: VerdictPart) =>
    `- ${icon(p.passed)} ${cell(p.text)}${p.passed || !p.reasons?.length ? '' : `: ${cell(p.reasons.join('; '))}`}`;
  // The thresholds have a table of their own below; listed here as well they would say it twice.
  const listed = v.kind === 'thresholds' ? v.gates : [...v.parts, ...v.gates];
  return [
    `### ${icon(v.passed)} petstore-load: ${cell(result.meta.scenario)}: ${cell(v.headline)}`,
    ...(listed.length > 0 ? ['', ...listed.map(part)] : []),
    ...(v.compliance
      ? [
          '',
          `Compliance, for reading (the thresholds decide): ${v.compliance.map((p) => `${icon(p.passed)} ${cell(p.text)}`).join('; ')}`,
        ]
      : []),
  ];
}

/** The gates' own tables, each only when it has rows: thresholds, probes, regressions against the baseline. */
function gateTables(result: RunResult): string[] {
  const lines: string[] = [];
  const thresholds = result.thresholds ?? [];
  if (thresholds.length > 0) {
    lines.push('', '| threshold | source | actual | result |', '|---|---|---:|---|');
    for (const t of thresholds) {
      lines.push(
        `| ${code(t.expression)} | ${t.source} | ${t.actual ?? '—'} | ${t.passed ? '✅ pass' : `❌ ${cell(t.detail ?? 'fail')}`} |`,
      );
    }
  }
  const probes = result.probes ?? [];
  if (probes.length > 0) {
    lines.push('', '| probe | expected | actual | result |', '|---|---|---|---|');
    for (const p of probes) {
      lines.push(
        `| ${code(p.id)} | ${cell(p.expected)} | ${cell(p.actual)} | ${p.passed ? '✅ pass' : `❌ ${cell(p.detail ?? 'fail')}`} |`,
      );
    }
  }
  const regressions = result.baseline?.regressions ?? [];
  if (regressions.length > 0) {
    lines.push(
      '',
      `| regression against ${code(result.baseline?.file ?? '')} | baseline | current |`,
      '|---|---:|---:|',
    );
    for (const r of regressions) {
      const value = (x: number) =>
        r.metric === 'errors' || r.metric === 'rate_limited' ? pct(x) : x.toFixed(2);
      lines.push(`| ${cell(r.operation)} ${r.metric} | ${value(r.baseline)} | ${value(r.current)} |`);
    }
  }
  return lines;
}

/** A tenant mix: its tiers side by side (named groups marked), then the noisy-neighbour verdict per tier. */
function tierTable(result: RunResult): string[] {
  const rows: [string, TierSummary][] = [
    ...Object.entries(result.byPlan ?? {}).map(([name, t]): [string, TierSummary] => [cell(name), t]),
    ...Object.entries(result.byTenantGroup ?? {}).map(([name, t]): [string, TierSummary] => [
      `${cell(name)} _(group${t.enforce ? '' : ', raw'})_`,
      t,
    ]),
  ];
  if (rows.length === 0) return [];
  const lines = [
    '',
    '| tier | keys | requests | rate | p50 | p99 | 429s | violations | errors | utilisation | keys min / p50 / max |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, t] of rows) {
    const u = t.utilization;
    lines.push(
      `| ${name} | ${t.keysSeen}/${t.keys} | ${t.requests} | ${t.rate.toFixed(1)}/s | ${ms(t.response.p50)} | ${ms(t.response.p99)} | ${t.rateLimited} | ${t.violations} | ${t.errors} | ${pct(u.overall)} | ${pct(u.min)} / ${pct(u.p50)} / ${pct(u.max)} |`,
    );
  }
  const v = result.isolation;
  if (!v) return lines;
  lines.push(
    '',
    `**Isolation ${v.passed ? 'held' : 'broken'}** (${cell(v.noisyGroups.join(', '))} from ${(v.noisyFromMs / 1000).toFixed(1)} s): ${cell(v.detail)}`,
    '',
    '| plan | p50 before → after | p99 before → after | 429s | errors | p-value | result |',
    '|---|---:|---:|---:|---:|---:|---|',
  );
  for (const [plan, t] of Object.entries(v.tiers)) {
    const { before: b, after: a } = t;
    lines.push(
      `| ${cell(plan)} | ${ms(b.p50Ms)} → ${ms(a.p50Ms)} | ${ms(b.p99Ms)} → ${ms(a.p99Ms)} | ${b.rateLimited} → ${a.rateLimited} | ${b.errors} → ${a.errors} | ${cell(describeP(t.pValue))} | ${t.passed ? '✅ pass' : `❌ ${cell(t.reason ?? 'fail')}`} |`,
    );
  }
  return lines;
}
