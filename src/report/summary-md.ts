import type { RunResult } from '../result/types.ts';
import { errorCount } from './threshold-evaluate.ts';

/** Table cells: a pipe or a line break from a server's text must not break the table. */
function cell(text: string | number): string {
  return String(text).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

const pct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.001 ? 3 : 1)}%`;
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

/**
 * A markdown summary for a CI job's page (GitHub's step summary renders it): the verdict first,
 * then the figures a reviewer checks, then what failed and why.
 */
export function renderSummaryMarkdown(result: RunResult): string {
  const { meta, overall, compliance } = result;
  const thresholds = result.thresholds ?? [];
  const failed = thresholds.filter((t) => !t.passed);
  const lines: string[] = [];
  const verdict =
    thresholds.length === 0
      ? 'no thresholds declared'
      : failed.length === 0
        ? `all ${thresholds.length} thresholds passed`
        : `${failed.length} of ${thresholds.length} thresholds failed`;
  const icon = thresholds.length === 0 ? 'ℹ️' : failed.length === 0 ? '✅' : '❌';
  lines.push(`### ${icon} petstore-load: ${cell(meta.scenario)}: ${verdict}`);
  if (meta.partial) lines.push('', `> Partial run: interrupted by ${cell(meta.interruptedBy ?? 'unknown')}.`);
  lines.push(
    '',
    `Plan **${cell(meta.plan)}** against \`${cell(meta.target)}\`${meta.embeddedTarget ? ' (embedded reference server)' : ''}, ${meta.durationSeconds} s from ${meta.startedAt}.`,
    '',
    '| requests | rate | p50 | p95 | p99 | 429s | errors | checks failed | quota used | violations |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${overall.requests} | ${overall.rate.toFixed(1)}/s | ${ms(overall.response.p50)} | ${ms(overall.response.p95)} | ${ms(overall.response.p99)} | ${overall.rateLimited} (${pct(overall.rateLimitedRate)}) | ${errorCount(overall)} | ${overall.checkFailures} | ${pct(compliance.quotaUtilization)} | ${compliance.violations} |`,
  );
  if (thresholds.length > 0) {
    lines.push('', '| threshold | source | actual | result |', '|---|---|---:|---|');
    for (const t of thresholds) {
      lines.push(
        `| \`${cell(t.expression)}\` | ${t.source} | ${t.actual ?? '—'} | ${t.passed ? '✅ pass' : `❌ ${cell(t.detail ?? 'fail')}`} |`,
      );
    }
  }
  lines.push(
    '',
    '| operation | requests | rate | p50 | p99 | 429s | errors | checks failed |',
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
  const failing = result.checks.filter((c) => c.failures > 0);
  if (failing.length > 0) {
    lines.push('', '**Failed checks**', '');
    for (const c of failing) {
      const sample = c.samples[0];
      lines.push(
        `- \`${c.id}\`: ${c.failures} of ${c.passes + c.failures}: ${cell(c.rule)}${sample ? ` (e.g. ${cell(sample.operation)} ${sample.status}: ${cell(sample.detail)})` : ''}`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}
