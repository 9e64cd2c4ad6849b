import { describe, expect, it } from 'vitest';
import {
  formatDeprecation,
  parseDeprecation,
  parseLinks,
  parseSunset,
} from '../../src/api/deprecation-headers.ts';
import { parseDuration } from '../../src/api/duration.ts';
import { formatHttpDate, parseHttpDate } from '../../src/api/http-date.ts';
import { parseIntegerHeader, readRateLimitHeaders } from '../../src/api/rate-limit-headers.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../src/api/retry-after.ts';

describe('header parsers', () => {
  it('reads rate-limit headers as strict non-negative integers', () => {
    expect(
      readRateLimitHeaders({
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': ' 0 ',
        'x-ratelimit-reset': '1795292581',
      }),
    ).toEqual({
      limit: 60,
      remaining: 0,
      reset: 1795292581,
    });
    for (const bad of ['-1', '1.5', '1e3', '', 'ten', '1, 2', undefined, ['1', '2']]) {
      expect(parseIntegerHeader(bad), String(bad)).toBeUndefined();
    }
  });

  it('parses Retry-After as delay-seconds or IMF-fixdate, never negative', () => {
    expect(parseRetryAfter('120')).toEqual({ form: 'seconds', seconds: 120 });
    const date = parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT');
    expect(date).toEqual({ form: 'date', date: new Date('1994-11-06T08:49:37Z') });
    if (!date) throw new Error('unparsed');
    expect(retryAfterDelayMs(date, Date.parse('1994-11-06T08:49:30Z'))).toBe(7000);
    expect(retryAfterDelayMs(date, Date.parse('1994-11-06T09:00:00Z'))).toBe(0);
    // The obsolete RFC 850 and asctime forms, and a wrong weekday, are not what a sender may generate.
    for (const bad of [
      'Sunday, 06-Nov-94 08:49:37 GMT',
      'Sun Nov  6 08:49:37 1994',
      'Mon, 06 Nov 1994 08:49:37 GMT',
      '-5',
      '1.5',
    ]) {
      expect(parseRetryAfter(bad), bad).toBeUndefined();
    }
  });

  it('formats and parses HTTP dates, Deprecation, Sunset and Link', () => {
    const when = new Date('2028-06-30T00:00:00Z');
    expect(formatHttpDate(when)).toBe('Fri, 30 Jun 2028 00:00:00 GMT');
    expect(parseHttpDate('Fri, 30 Jun 2028 00:00:00 GMT')).toEqual(when);
    expect(parseHttpDate('Fri, 31 Jun 2028 00:00:00 GMT')).toBeUndefined();
    expect(formatDeprecation(new Date('2026-01-01T00:00:00Z'))).toBe('@1767225600');
    expect(parseDeprecation('@1767225600')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(parseDeprecation('1767225600')).toBeUndefined();
    expect(parseDeprecation('Thu, 01 Jan 2026 00:00:00 GMT')).toBeUndefined();
    expect(parseSunset('Fri, 30 Jun 2028 00:00:00 GMT')).toEqual(when);
    expect(parseLinks('</openapi.yaml>; rel="sunset", <https://x/y>; rel=successor-version')).toEqual([
      { uri: '/openapi.yaml', rel: ['sunset'] },
      { uri: 'https://x/y', rel: ['successor-version'] },
    ]);
  });

  it('parses durations strictly', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    // A JavaScript number (from a scenario) is milliseconds; text needs its unit.
    expect(parseDuration(40)).toBe(40);
    for (const bad of ['-1s', '30 seconds', 's', '1w', '40'])
      expect(() => parseDuration(bad, '--duration')).toThrow(/^--duration: /);
  });
});
