import type { Compliance } from '../result/types.ts';

/**
 * What every output (terminal, HTML, JUnit, markdown) says of the limiter's refusals, worded once:
 * the 429-rate figures count every refusal whatever its status, so a reader who sees a 503 among
 * them must be told, or "429s 15" reads as fifteen 429s.
 */

/**
 * The refusals by status, ascending (`403: 2, 429: 12, 503: 3`), or undefined when every one was a
 * 429: an older result has no `refusals`, and then its refusals were all 429s (nothing else was one).
 */
export function refusalStatuses(c: Pick<Compliance, 'refusals'>): string | undefined {
  const entries = Object.entries(c.refusals ?? {}).filter(([, n]) => n > 0);
  if (entries.every(([status]) => status === '429')) return undefined;
  return entries
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
}

/** `refusals 15 (429: 12, 503: 3)`, or today's `429s 15` when every refusal was a 429. */
export function describeRefusals(c: Pick<Compliance, 'refusals' | 'rateLimited'>): string {
  const statuses = refusalStatuses(c);
  return statuses === undefined ? `429s ${c.rateLimited}` : `refusals ${c.rateLimited} (${statuses})`;
}

/**
 * An answer that may have been the limiter's refusal but was not counted as one: each output lays
 * it out its own way (the flag as code in HTML and markdown), so it comes in parts.
 */
export interface RefusalNote {
  /** For data attributes and tests. */
  id: 'unexplained' | 'forbidden-after-admitted';
  /** `503 unexplained`, `403 after admissions`. */
  lead: string;
  count: number;
  why: string;
  flag: string;
  /** What the flag does to them. */
  effect: string;
}

export function refusalNotes(c: Pick<Compliance, 'unexplained' | 'forbiddenAfterAdmitted'>): RefusalNote[] {
  const notes: RefusalNote[] = [];
  if (c.unexplained)
    notes.push({
      id: 'unexplained',
      lead: '503 unexplained',
      count: c.unexplained,
      why: 'no Retry-After, no rate-limit field, no problem type: a headerless limiter (nginx limit_req answers 503 by default) or an overloaded target; kept away from as refusals',
      flag: '--refusal-status 503',
      effect: "counts them as the limiter's",
    });
  if (c.forbiddenAfterAdmitted)
    notes.push({
      id: 'forbidden-after-admitted',
      lead: '403 after admissions',
      count: c.forbiddenAfterAdmitted,
      why: 'a key the limiter admitted turned to bare 403s, as a limiter refusing with 403 does',
      flag: '--refusal-status 403',
      effect: "counts them as the limiter's refusals",
    });
  return notes;
}

/** One note as one line of plain text (terminal, JUnit). */
export const noteLine = (n: RefusalNote): string => `${n.lead}: ${n.count} — ${n.why}; ${n.flag} ${n.effect}`;

/** The statuses and the notes as plain lines, for outputs that have no figure of their own to put them in. */
export function refusalLines(c: Compliance): string[] {
  const statuses = refusalStatuses(c);
  return [
    ...(statuses === undefined ? [] : [`refusals by status: ${statuses}`]),
    ...refusalNotes(c).map(noteLine),
  ];
}
