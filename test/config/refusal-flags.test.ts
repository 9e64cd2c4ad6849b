import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { parseRefusalStatuses } from '../../src/config/refusal-flags.ts';

describe('--refusal-status', () => {
  it('takes statuses repeated or comma-separated, once each, in order', () => {
    expect(parseRefusalStatuses(undefined)).toEqual([]);
    expect(parseRefusalStatuses(['503', 403])).toEqual([403, 503]);
    expect(parseRefusalStatuses(['503,403', '503'])).toEqual([403, 503]);
  });

  it('refuses what is no 4xx or 5xx status, in one line naming it', () => {
    for (const bad of ['200', '99', '600', 'abc', '503.5', ''])
      expect(() => parseRefusalStatuses([bad]), bad).toThrow(InputError);
    expect(() => parseRefusalStatuses(['2xx'])).toThrow(
      '--refusal-status 2xx: want a 4xx or 5xx status, e.g. 503',
    );
  });
});
