/** Number formats of the report: fixed locale, so that a report reads the same wherever it is built. */

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const count = (n: number): string => integer.format(n);

/** Three significant digits at most, never in exponent form: 0.123, 12.3, 1,234. */
export function decimal(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : Math.abs(n) >= 1 ? 2 : 3;
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: digits }).format(n);
}

export const ms = (n: number): string => `${decimal(n)} ms`;

export const perSecond = (n: number): string => `${decimal(n)}/s`;

/** A share (0..1) as a percentage; small non-zero shares keep a digit so they do not read as 0%. */
export function percent(share: number): string {
  const p = share * 100;
  if (p === 0 || p === 100) return `${p}%`;
  return `${p >= 99.9 && p < 100 ? Math.floor(p * 100) / 100 : decimal(p)}%`;
}

/** Wait totals: ms below a second, then seconds. */
export const duration = (milliseconds: number): string =>
  milliseconds < 1000 ? ms(milliseconds) : `${decimal(milliseconds / 1000)} s`;

/** `1 retry`, `2 retries`: the word is given in both forms, English plurals being irregular. */
export const counted = (n: number, one: string, many: string): string =>
  `${count(n)} ${n === 1 ? one : many}`;
