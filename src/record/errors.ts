/** What both a live OperationStats and a result's OperationSummary count answers in. */
export interface AnswerCounts {
  statuses: Record<string, number>;
  transportErrors: Record<string, number>;
}

/** 5xx responses and transport errors: failures of the target, not of the client's requests (4xx). */
export function errorCount(counts: AnswerCounts): number {
  let errors = 0;
  for (const status in counts.statuses) if (Number(status) >= 500) errors += counts.statuses[status] ?? 0;
  for (const code in counts.transportErrors) errors += counts.transportErrors[code] ?? 0;
  return errors;
}

/** Requests that got an HTTP answer of any status: none at all means the target never answered. */
export function answeredCount(counts: AnswerCounts): number {
  let answered = 0;
  for (const status in counts.statuses) answered += counts.statuses[status] ?? 0;
  return answered;
}

// Codes as undici and Node's sockets name them, grouped as a person asks about them.
const KINDS: { kind: string; codes: RegExp }[] = [
  { kind: 'timeout', codes: /TIMEOUT|ETIMEDOUT/ },
  { kind: 'reset', codes: /^(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED|ECONNABORTED)$/ },
  { kind: 'refused', codes: /^ECONNREFUSED$/ },
];

/**
 * Transport errors by kind and code, e.g. `12 timeouts (UND_ERR_HEADERS_TIMEOUT 12), 1 reset
 * (ECONNRESET 1)`; undefined when there were none. Codes of no known kind are named on their own.
 */
export function describeTransportErrors(transportErrors: Record<string, number>): string | undefined {
  const groups = new Map<string, [string, number][]>();
  for (const [code, count] of Object.entries(transportErrors).sort(([, a], [, b]) => b - a)) {
    if (!count) continue;
    const kind = KINDS.find((k) => k.codes.test(code))?.kind ?? 'other';
    groups.set(kind, [...(groups.get(kind) ?? []), [code, count]]);
  }
  if (groups.size === 0) return undefined;
  const order = [...KINDS.map((k) => k.kind), 'other'];
  return [...groups]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([kind, codes]) => {
      const total = codes.reduce((sum, [, n]) => sum + n, 0);
      const label = kind === 'other' ? 'other' : `${kind}${total === 1 ? '' : 's'}`;
      return `${total} ${label} (${codes.map(([code, n]) => `${code} ${n}`).join(', ')})`;
    })
    .join(', ');
}
