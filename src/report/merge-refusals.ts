import type { Compliance, RunConfig } from '../result/types.ts';

type RefusalFigures = Pick<Compliance, 'refusals' | 'unexplained' | 'forbiddenAfterAdmitted'>;

/**
 * The parts' refusals by status added up, and the bare 503s and bare 403s after admissions. A part
 * of an older version has no `refusals`: its refusals were its 429s (nothing else was one then), so
 * the merged statuses still add up to `rateLimited`. Each field stays absent when every part lacks it.
 */
export function mergeRefusals(parts: Compliance[]): RefusalFigures {
  const merged: RefusalFigures = {};
  if (parts.some((c) => c.refusals !== undefined)) {
    // A Map, not an object: a file may name a status `__proto__`.
    const byStatus = new Map<string, number>();
    for (const c of parts)
      for (const [status, n] of Object.entries(c.refusals ?? { 429: c.rateLimited }))
        if (n > 0) byStatus.set(status, (byStatus.get(status) ?? 0) + n);
    merged.refusals = Object.fromEntries([...byStatus].sort(([a], [b]) => Number(a) - Number(b)));
  }
  const unexplained = sumOf(parts, 'unexplained');
  const forbidden = sumOf(parts, 'forbiddenAfterAdmitted');
  if (unexplained > 0) merged.unexplained = unexplained;
  if (forbidden > 0) merged.forbiddenAfterAdmitted = forbidden;
  return merged;
}

const sumOf = (parts: Compliance[], field: 'unexplained' | 'forbiddenAfterAdmitted') =>
  parts.reduce((n, c) => n + (c[field] ?? 0), 0);

/**
 * Every status a part counted as the limiter's (`--refusal-status`): the merged refusals include
 * theirs, so the merged config names them all. Absent when no part was given any.
 */
export function mergeRefusalStatuses(configs: RunConfig[]): Pick<RunConfig, 'refusalStatuses'> {
  const statuses = [...new Set(configs.flatMap((c) => c.refusalStatuses ?? []))].sort((a, b) => a - b);
  return statuses.length > 0 ? { refusalStatuses: statuses } : {};
}
