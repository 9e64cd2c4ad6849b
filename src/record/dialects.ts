import { DIALECTS, type Dialect, type RateLimitView } from '../api/rate-limit-dialect.ts';
import { type Contract, DIALECT_LABELS, viewKeeps } from './checks/contract.ts';

export type DialectCounts = Partial<Record<Dialect | 'none', number>>;

/** What the result says of the dialects the target spoke (`compliance.headerDialect`). */
export interface HeaderDialect {
  /** The dialect the checks judged as promised (`run --contract`). */
  contract: Contract;
  /** The dialect most responses told their quota in; `none` when not one did. */
  detected: Dialect | 'none';
  /** Dialects sent beside the one read, on any response (legacy and IETF fields together). */
  alsoSent: Dialect[];
  /** Responses per dialect read. */
  counts: DialectCounts;
}

/** The dialect most responses spoke; `none` only when no response told its quota at all. */
export function detectedDialect(counts: DialectCounts): Dialect | 'none' {
  let best: Dialect | 'none' = 'none';
  let most = 0;
  for (const d of DIALECTS) {
    const n = counts[d] ?? 0;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

/** In DIALECTS' order, so that results compare and merge alike whatever order they were seen in. */
export const inDialectOrder = (seen: Iterable<Dialect>): Dialect[] => {
  const set = new Set(seen);
  return DIALECTS.filter((d) => set.has(d));
};

/** Counts the dialect of every response the checks see. */
export class DialectTally {
  private readonly counts: DialectCounts = {};
  private readonly alsoSent = new Set<Dialect>();

  add(view: RateLimitView): void {
    this.counts[view.dialect] = (this.counts[view.dialect] ?? 0) + 1;
    for (const d of view.alsoSent) this.alsoSent.add(d);
  }

  /** Undefined until a response has been counted: no response, no dialect to name. */
  snapshot(contract: Contract): HeaderDialect | undefined {
    if (Object.keys(this.counts).length === 0) return undefined;
    return {
      contract,
      detected: detectedDialect(this.counts),
      alsoSent: inDialectOrder(this.alsoSent),
      counts: { ...this.counts },
    };
  }
}

/**
 * One line for a person: the dialect detected (in words), on how many responses, the others seen,
 * and the contract, with whether the dialect detected keeps it.
 */
export function describeHeaderDialect(h: HeaderDialect): string {
  const entries = Object.entries(h.counts) as [Dialect | 'none', number][];
  const total = entries.reduce((n, [, c]) => n + c, 0);
  const others = entries.filter(([d]) => d !== h.detected).map(([d, n]) => `${d} on ${n}`);
  const kept = viewKeeps(h.contract, { dialect: h.detected, alsoSent: h.alsoSent });
  return [
    `${h.detected} (${DIALECT_LABELS[h.detected]}) on ${h.counts[h.detected] ?? 0} of ${total} responses`,
    others.length > 0 ? `, ${others.join(', ')}` : '',
    h.alsoSent.length > 0 ? `; also sent: ${h.alsoSent.join(', ')}` : '',
    `; contract ${h.contract}`,
    // The document's promise is per operation and status: the checks say where it was kept.
    h.contract === 'document'
      ? " (what the document declares for each response's status)"
      : kept
        ? ' (kept)'
        : ': not the dialect detected',
  ].join('');
}
