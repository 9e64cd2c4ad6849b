/** What both a live OperationStats and a result's OperationSummary count answers in. */
export interface AnswerCounts {
  statuses: Record<string, number>;
  transportErrors: Record<string, number>;
  /** The limiter's refusals by status (absent from results written before). */
  refusals?: Record<string, number>;
}

/**
 * 5xx responses and transport errors: failures of the target, not of the client's requests (4xx).
 * A limiter's refusal in a 503 stays one too: load balancers and CDNs answer overload and upkeep with
 * 503 and Retry-After, and an errors threshold must not pass a target that answered so.
 */
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
const KINDS: { kind: string; plural: string; codes: RegExp }[] = [
  { kind: 'timeout', plural: 'timeouts', codes: /TIMEOUT|ETIMEDOUT/ },
  {
    kind: 'reset',
    plural: 'resets',
    codes: /^(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED|ECONNABORTED|H2_GOAWAY)$/,
  },
  { kind: 'refused', plural: 'refused', codes: /^ECONNREFUSED$/ },
  { kind: 'other', plural: 'other', codes: /./ },
];

/**
 * Transport errors by kind and code, e.g. `12 timeouts (UND_ERR_HEADERS_TIMEOUT 12), 1 reset
 * (ECONNRESET 1)`; undefined when there were none. Codes of no known kind are named on their own.
 */
export function describeTransportErrors(transportErrors: Record<string, number>): string | undefined {
  const groups = new Map<number, [string, number][]>();
  for (const [code, count] of Object.entries(transportErrors).sort(([, a], [, b]) => b - a)) {
    if (!count) continue;
    const kind = KINDS.findIndex((k) => k.codes.test(code));
    groups.set(kind, [...(groups.get(kind) ?? []), [code, count]]);
  }
  if (groups.size === 0) return undefined;
  return [...groups]
    .sort(([a], [b]) => a - b)
    .map(([kind, codes]) => {
      const total = codes.reduce((sum, [, n]) => sum + n, 0);
      const { kind: one, plural } = KINDS[kind] as (typeof KINDS)[number];
      return `${total} ${total === 1 ? one : plural} (${codes.map(([code, n]) => `${code} ${n}`).join(', ')})`;
    })
    .join(', ');
}
