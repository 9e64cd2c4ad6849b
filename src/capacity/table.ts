import type { CapacityReport } from '../result/capacity-types.ts';

const show = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : String(v));

/** The capacity table for the terminal: one row per plan, then the reasons of any failing one. */
export function formatCapacityTable(reports: readonly CapacityReport[]): string {
  const header = [
    'plan',
    'per min',
    'per day',
    'window',
    'accepted/window',
    'first 429',
    'reset err ms',
    'retry-after err ms',
    'limiter',
    'verdict',
  ];
  const rows = reports.map((r) => [
    r.plan,
    show(r.promisedPerMinute),
    show(r.promisedPerDay),
    `${r.window.limit}/${r.window.seconds}s`,
    r.rate.acceptedPerWindow.join(', ') || '–',
    r.exhaust.first429At === null
      ? `none ≤${r.exhaust.sent}`
      : `${r.exhaust.first429At} (want ${r.exhaust.expected429At})`,
    show(r.recovery.resetErrorMs),
    show(r.recovery.retryAfterAccuracyMs),
    r.limiter.type,
    r.verdict,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const r of reports) for (const why of r.reasons) out.push(`  ${r.plan}: ${why}`);
  return out.join('\n');
}
