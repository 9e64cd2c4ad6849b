import { formatHttpDate, parseHttpDate } from './http-date.ts';
import type { HeaderValue } from './rate-limit-headers.ts';

/** RFC 9745: `Deprecation: @1688169599`, a Structured Field Date (Unix seconds after an "@"). */
export function formatDeprecation(date: Date): string {
  return `@${Math.floor(date.getTime() / 1000)}`;
}

// Like Sunset below, the same value comes on every response of an operation: parse it once.
let lastDeprecation: { value: string; date: Date | undefined } | undefined;

/**
 * RFC 9745's `Deprecation: @1688169599` as a date; undefined when absent or not that form.
 *
 * @example
 * const res = await api.getPetById(7);
 * const since = parseDeprecation(res.headers.deprecation); // the operation is deprecated since then
 */
export function parseDeprecation(value: HeaderValue): Date | undefined {
  if (typeof value !== 'string') return undefined;
  if (lastDeprecation?.value !== value) {
    const m = /^@(-?\d{1,15})$/.exec(value.trim());
    lastDeprecation = { value, date: m ? new Date(Number(m[1]) * 1000) : undefined };
  }
  return lastDeprecation.date;
}

/** RFC 8594: `Sunset: <IMF-fixdate>`. */
export const formatSunset = formatHttpDate;

// A deprecated operation sends the same Sunset on every response: parse each distinct value once.
let lastSunset: { value: string; date: Date | undefined } | undefined;

/**
 * RFC 8594's `Sunset: Sat, 31 Oct 2026 23:59:59 GMT` as a date; undefined when absent or not an HTTP-date.
 *
 * @example
 * const gone = parseSunset((await api.getPetById(7)).headers.sunset);
 */
export function parseSunset(value: HeaderValue): Date | undefined {
  if (typeof value !== 'string') return undefined;
  if (lastSunset?.value !== value) lastSunset = { value, date: parseHttpDate(value) };
  return lastSunset.date;
}

export interface LinkValue {
  uri: string;
  rel: string[];
}

/** Just enough of RFC 8288 to find `rel="sunset"`: `<uri>; rel="a b", <uri2>; rel=c`. */
// The same Link comes on every response of a deprecated operation: parse each distinct value once.
let lastLinks: { value: string; links: readonly LinkValue[] } | undefined;

export function parseLinks(value: HeaderValue): readonly LinkValue[] {
  if (typeof value !== 'string') return [];
  if (lastLinks?.value !== value) lastLinks = { value, links: parseLinkList(value) };
  return lastLinks.links;
}

function parseLinkList(value: string): LinkValue[] {
  const links: LinkValue[] = [];
  for (const m of value.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(m[2] ?? '');
    links.push({
      uri: m[1] ?? '',
      rel: (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).filter(Boolean),
    });
  }
  return links;
}
