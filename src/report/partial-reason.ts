import { formatInstant } from '../api/duration.ts';
import type { ResultMeta } from '../result/types.ts';

/**
 * Why a result covers less than its run was meant to, in words: a checkpoint (written while the run
 * went on; found on disk afterwards, the run never wrote its result), a signal or an aborting
 * threshold, or whatever else said itself (a failed setup, a failed worker).
 */
export function partialReason(meta: Pick<ResultMeta, 'checkpoint' | 'interruptedBy' | 'endedAt'>): string {
  if (meta.checkpoint)
    return `a checkpoint written while the run went on, its figures up to ${formatInstant(Date.parse(meta.endedAt))}`;
  const by = meta.interruptedBy;
  if (by === undefined) return 'interrupted';
  return /^(SIG|threshold )/.test(by) ? `interrupted by ${by}` : by;
}
