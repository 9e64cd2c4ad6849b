import { InputError } from './input-error.ts';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * Parses the durations users type on the command line and in scenarios: `250ms`, `30s`, `1.5m`, `2h`, `1d`.
 * Text needs its unit (`--duration 30` is an error, not 30 ms); a JavaScript number in a scenario is
 * milliseconds. Strict on purpose: `30 seconds` or `-1s` is an error, not a guess.
 */
export function parseDuration(text: string | number | undefined | null, what = 'duration'): number {
  if (typeof text === 'number') {
    if (Number.isFinite(text) && text >= 0) return text;
    throw new InputError(`${what}: expected a non-negative duration, got ${text}`);
  }
  if (typeof text !== 'string')
    throw new InputError(`${what}: a duration is required (examples: 250ms, 30s, 2m)`);
  const match = DURATION.exec(text.trim());
  if (!match) throw new InputError(`${what}: '${text}' is not a duration (examples: 250ms, 30s, 2m, 1h, 1d)`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

/**
 * An instant for people: `2058-01-03 04:05:06 UTC`. A server may announce one no Date can hold
 * (a Retry-After of 10^15 s): that is said in words rather than thrown.
 */
export function formatInstant(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return ms > 0 ? 'a date beyond the year 275760' : 'an unknown time';
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `35 s`, `1 min 52 s`, `2 h 14 min`: how long, as a person reads it before deciding to wait. */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}
