import { isSpacingLimiter } from '../../api/limiter-kinds.ts';
import { limiterExtras } from '../../report/sections/capacity.ts';
import type { BanReport, CapacityReport, TenantCapacity, TenantStep } from '../../result/capacity-types.ts';
import { describeProbed } from '../probed-operation.ts';

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
    'model',
    'sustained/s',
    'burst',
    'dialect',
    'verdict',
  ];
  const daily = reports.some((r) => r.daily);
  if (daily) header.splice(header.length - 5, 0, 'day accepted', 'day 429');
  const rows = reports.map((r) => [
    r.plan,
    show(r.promisedPerMinute),
    show(r.promisedPerDay),
    `${r.window.limit}/${r.window.seconds}s`,
    r.rate.acceptedPerWindow.join(', ') || '–',
    first429Cell(r),
    show(r.recovery.resetErrorMs),
    show(r.recovery.retryAfterAccuracyMs),
    ...(daily ? dailyCells(r) : []),
    ...limiterCells(r),
    r.verdict,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const out = [...probedLines(reports), line(header), ...rows.map(line)];
  for (const r of reports) for (const why of r.reasons) out.push(`  ${r.plan}: ${why}`);
  for (const r of reports) for (const note of r.daily?.notes ?? []) out.push(`  ${r.plan} (note): ${note}`);
  return out.join('\n');
}

/** The operation the probes sent, said once when every plan's was the same (a result written before names none). */
function probedLines(reports: readonly CapacityReport[]): string[] {
  const named = new Set(reports.map((r) => (r.operation ? describeProbed(r.operation) : '')));
  return named.size === 1 && !named.has('') ? [`every request: ${[...named][0]}`] : [];
}

/** Where the first 429 came; a window's is judged against its limit, a bucket's is its burst. */
export function first429Cell(r: CapacityReport): string {
  if (r.exhaust.first429At === null) return `none ≤${r.exhaust.sent}`;
  const type = r.limiter.type;
  return type !== 'unknown' && isSpacingLimiter(type)
    ? `${r.exhaust.first429At} (after burst)`
    : `${r.exhaust.first429At} (want ${r.exhaust.expected429At})`;
}

/** The limiter as measured (fields a result written before they existed lacks). */
export function limiterCells(r: CapacityReport): string[] {
  const l = r.limiter;
  const model = [l.type, ...limiterExtras(r)].join(', ');
  return [model, show(l.sustainedPerSecond), show(l.burst), l.headerDialect ?? '–'];
}

function dailyCells(r: CapacityReport): string[] {
  const d = r.daily;
  if (!d) return ['–', '–'];
  return [
    d.acceptedPerDay === null ? `${d.acceptedByProbe}+` : String(d.acceptedPerDay),
    d.first429At === null ? 'none' : `${d.first429At} (want ${d.expected429At})`,
  ];
}

/** The ban probe in a few lines: how many requests inside Retry-After it took, what the ban said, and whether it kept its word. */
export function formatBanReport(b: BanReport): string {
  const out: string[] = [];
  const head = `ban probe (${b.plan} key, ${b.requests} requests): `;
  if (!b.banned || !b.ban) out.push(`${head}no ban`);
  else {
    const ban = b.ban;
    const said = [
      `HTTP ${ban.status}`,
      ban.code ? `code ${ban.code}` : undefined,
      ban.announcedSeconds !== null ? `announced ${ban.announcedSeconds} s` : 'no announced end',
    ].filter(Boolean);
    const end =
      ban.endedAt === null
        ? ban.waited
          ? 'never seen to end'
          : 'not waited for'
        : ban.endErrorMs === null
          ? 'ended'
          : `ended ${ban.endErrorMs} ms ${ban.endErrorMs > 0 ? 'after' : 'before'} its announced end`;
    out.push(`${head}banned at request ${b.strikes.toBan} inside Retry-After; ${said.join(', ')}; ${end}`);
  }
  out.push(`  verdict: ${b.verdict}`);
  for (const why of b.reasons) out.push(`  ban probe: ${why}`);
  for (const note of b.notes) out.push(`  ban probe (note): ${note}`);
  return out.join('\n');
}

/**
 * `capacity --tenants` for the terminal: the headline, then one row per step in order of tenants
 * (the curve), the broken ones with their first reason.
 */
export function formatTenantCapacity(c: TenantCapacity): string {
  const mix = Object.keys(c.mix).length > 1;
  const header = [
    'tenants',
    ...(mix ? ['per plan'] : []),
    'req/s',
    'quota req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    '429s',
    'dropped',
    'lag ms',
    'gen cpu',
    'step',
  ];
  const steps = [...c.steps].sort((a, b) => a.tenants - b.tenants);
  const rows = steps.map((s) => [
    s.tenants.toLocaleString('en-US'),
    ...(mix ? [perPlanCell(s)] : []),
    s.rate.toFixed(1),
    s.offeredRate.toFixed(1),
    String(s.p50Ms),
    String(s.p99Ms),
    String(s.errors),
    String(s.rateLimited),
    String(s.droppedIterations),
    String(s.loopDelayP99Ms),
    `${Math.round(s.generatorCpu * 100)}%`,
    s.held ? 'held' : `broke: ${s.cause}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) =>
        i === 0 || i === cells.length - 1
          ? cell.padEnd(widths[i] as number)
          : cell.padStart(widths[i] as number),
      )
      .join('  ')
      .trimEnd();
  const out = [c.sentence, line(header), ...rows.map(line)];
  for (const s of steps)
    if (!s.held) for (const why of s.reasons) out.push(`  ${s.tenants.toLocaleString('en-US')}: ${why}`);
  const w = c.warmup;
  out.push(
    `steps of ${c.stepMs / 1000} s at each plan's full rate (time scale ${c.timeScale}), ${c.restMs / 1000} s apart${w ? `, after a warm-up of ${w.tenants} tenants for ${w.durationMs / 1000} s` : ''}; latency is response time (from when each request was due)`,
  );
  return out.join('\n');
}

const perPlanCell = (s: TenantStep) =>
  Object.entries(s.perPlan)
    .map(([plan, n]) => `${plan} ${n}`)
    .join(', ');
