import type { Comparison, MetricComparison, RowComparison } from './compare.ts';
import { describeTolerance, type Metric } from './tolerances.ts';

const LABEL: Record<Metric, string> = {
  p50: 'p50 ms',
  p95: 'p95 ms',
  p99: 'p99 ms',
  rps: 'rps',
  errors: 'errors',
  rate_limited: '429s',
};
const HEADER = [
  'operation',
  'metric',
  'baseline',
  'current',
  'delta',
  'change',
  'interval',
  'significance',
  'verdict',
];
const WIDTHS = [22, 7, 9, 9, 9, 8, 15, 16, 10];

const isShare = (metric: Metric) => metric === 'errors' || metric === 'rate_limited';
const signed = (n: number, digits: number) =>
  `${n > 0 ? '+' : n < 0 ? '-' : '±'}${Math.abs(n).toFixed(digits)}`;

function value(m: MetricComparison, n: number): string {
  if (isShare(m.metric)) return `${(n * 100).toFixed(2)}%`;
  return n.toFixed(m.metric === 'rps' ? 1 : 2);
}

function delta(m: MetricComparison): string {
  return isShare(m.metric) ? `${signed(m.delta * 100, 2)}pt` : signed(m.delta, m.metric === 'rps' ? 1 : 2);
}

function change(m: MetricComparison): string {
  if (isShare(m.metric)) return '';
  return m.relative === undefined ? 'n/a' : `${signed(m.relative * 100, 1)}%`;
}

/** Ratios as x0.95..1.10; differences of shares in points. */
function interval(m: MetricComparison): string {
  const i = m.interval;
  if (!i) return '';
  if (isShare(m.metric)) return `${signed(i.lower * 100, 2)}..${signed(i.upper * 100, 2)}`;
  const r = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'inf');
  return `x${r(i.lower)}..${r(i.upper)}`;
}

function line(cells: string[]): string {
  return cells
    .map((c, i) => (i < 2 ? c.padEnd(WIDTHS[i] as number) : c.padStart(WIDTHS[i] as number)))
    .join(' ')
    .trimEnd();
}

function rowLines(row: RowComparison): string[] {
  return row.metrics.map((m, i) =>
    line([
      i === 0 ? row.name : '',
      LABEL[m.metric],
      value(m, m.baseline),
      value(m, m.current),
      delta(m),
      change(m),
      interval(m),
      m.significance,
      m.verdict === 'regression' ? 'REGRESSION' : m.verdict,
    ]),
  );
}

const percent = (n: number) => `${Number((n * 100).toFixed(3))}%`;

/** The terminal table: each operation in both results and 'all', a metric a line, then the verdict. */
export function formatComparison(c: Comparison): string {
  const lines = [line(HEADER)];
  for (const row of c.rows) lines.push(...rowLines(row));
  const tolerances = (Object.keys(c.tolerances) as Metric[])
    .map((m) => `${m} ${describeTolerance(m, c.tolerances[m])}`)
    .join(', ');
  lines.push(
    `tolerances: ${tolerances}; intervals ${percent(c.confidence)} overall, ${percent(c.operationConfidence)} per operation (Bonferroni)`,
  );
  if (c.onlyInBaseline.length) lines.push(`only in the baseline: ${c.onlyInBaseline.join(', ')}`);
  if (c.onlyInCurrent.length) lines.push(`only in the current run: ${c.onlyInCurrent.join(', ')}`);
  if (c.differences.length) lines.push(`note: the runs differ in ${c.differences.join('; ')}`);
  lines.push(verdictLine(c));
  return lines.join('\n');
}

/** One line a CI log can be grepped for. */
export function verdictLine(c: Comparison): string {
  const improved = c.improvements ? ` (${c.improvements} improved)` : '';
  if (c.regressions === 0) return `verdict: no regression${improved}`;
  const which = c.rows.flatMap((r) =>
    r.metrics
      .filter((m) => m.verdict === 'regression')
      .map((m) => `${r.name} ${m.metric} ${isShare(m.metric) ? delta(m) : change(m)}`),
  );
  return `verdict: ${c.regressions} regression${c.regressions === 1 ? '' : 's'}: ${which.join(', ')}${improved}`;
}
