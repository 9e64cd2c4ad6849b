import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DIALECTS,
  type Dialect,
  type RateLimitView,
  readRateLimit,
  toldFields,
  writeRateLimit,
} from '../../src/api/rate-limit-dialect.ts';

const NOW = 1_700_000_000_000;

describe('reading each dialect, from the drafts and the limiters themselves', () => {
  it('ietf-8: a named policy and its current state (the draft-08 example)', () => {
    const view = readRateLimit(
      { 'ratelimit-policy': '"default";q=100;w=10', ratelimit: '"default";r=50;t=30' },
      NOW,
    );
    expect(view).toEqual({
      dialect: 'ietf-8',
      alsoSent: [],
      policy: 'default',
      limit: 100,
      remaining: 50,
      resetSeconds: 30,
      policies: [{ name: 'default', quota: 100, windowSeconds: 10 }],
      malformed: [],
    });
  });

  it('ietf-8: of several policies, the one closest to exhaustion governs', () => {
    const view = readRateLimit(
      {
        'ratelimit-policy': '"burst";q=100;w=60, "daily";q=1000;w=86400',
        ratelimit: '"burst";r=80;t=40, "daily";r=10;t=3600',
      },
      NOW,
    );
    expect(view).toMatchObject({ policy: 'daily', limit: 1000, remaining: 10, resetSeconds: 3600 });
    expect(view.policies).toHaveLength(2);
  });

  it('ietf-8 as express-rate-limit sends it (spaces, a partition key), beside its legacy fields', () => {
    const view = readRateLimit(
      {
        'ratelimit-policy': '"10-in-10sec"; q=10; w=10; pk=:MTI3LjAuMC4x:',
        ratelimit: '"10-in-10sec"; r=9; t=10',
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '9',
        'x-ratelimit-reset': String(NOW / 1000 + 10),
      },
      NOW,
    );
    expect(view).toMatchObject({
      dialect: 'ietf-8',
      alsoSent: ['seed'],
      limit: 10,
      remaining: 9,
      resetSeconds: 10,
    });
  });

  it('ietf-7: one dictionary, and unnamed policies (the draft-07 example)', () => {
    const view = readRateLimit(
      {
        ratelimit: 'limit=10, remaining=1, reset=7',
        'ratelimit-policy': '10;w=1, 50;w=60, 1000;w=3600, 5000;w=86400',
      },
      NOW,
    );
    expect(view).toMatchObject({ dialect: 'ietf-7', limit: 10, remaining: 1, resetSeconds: 7 });
    expect(view.policies).toEqual([
      { quota: 10, windowSeconds: 1 },
      { quota: 50, windowSeconds: 60 },
      { quota: 1000, windowSeconds: 3600 },
      { quota: 5000, windowSeconds: 86400 },
    ]);
  });

  it('ietf-6: three fields, Reset in seconds until (the draft-06 example)', () => {
    const view = readRateLimit(
      { 'ratelimit-limit': '10', 'ratelimit-remaining': '1', 'ratelimit-reset': '7' },
      NOW,
    );
    expect(view).toMatchObject({ dialect: 'ietf-6', limit: 10, remaining: 1, resetSeconds: 7 });
  });

  it.each([
    ['a Unix time in seconds (the seed)', String(NOW / 1000 + 42), 'seed'],
    ['seconds until the reset (@fastify/rate-limit)', '42', 'seconds-until'],
    ['a Unix time in milliseconds', String(NOW + 42_000), 'unix-ms'],
  ])('X-RateLimit-Reset as %s: 42 s either way', (_, reset, dialect) => {
    const view = readRateLimit(
      { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': reset },
      NOW,
    );
    expect(view).toMatchObject({ dialect, limit: 60, remaining: 3, resetSeconds: 42 });
  });

  it('says none when the response is silent, and names what it could not read', () => {
    expect(readRateLimit({ 'content-type': 'application/json' }, NOW)).toMatchObject({
      dialect: 'none',
      malformed: [],
    });
    const bad = readRateLimit(
      { ratelimit: 'limit=ten', 'ratelimit-policy': '"x";q=', 'x-ratelimit-remaining': '-1' },
      NOW,
    );
    expect(bad.malformed.sort()).toEqual(['ratelimit', 'ratelimit-policy', 'x-ratelimit-remaining']);
    expect(bad.remaining).toBeUndefined();
  });
});

/** A whole view a dialect can carry: every field it has, integers in range. */
const completeView = fc
  .record({
    limit: fc.integer({ min: 1, max: 1_000_000 }),
    used: fc.integer({ min: 0, max: 1_000_000 }),
    reset: fc.integer({ min: 0, max: 10_000_000 }),
    window: fc.integer({ min: 1, max: 86_400 * 30 }),
    name: fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/),
  })
  .map(
    ({ limit, used, reset, window, name }): RateLimitView => ({
      dialect: 'none',
      alsoSent: [],
      limit,
      remaining: Math.max(0, limit - used),
      resetSeconds: reset,
      policy: name,
      policies: [{ name, quota: limit, windowSeconds: window }],
      malformed: [],
    }),
  );

describe('round trip', () => {
  it('a response parsed and written again in its dialect reads the same, whatever the clock', () => {
    fc.assert(
      fc.property(
        completeView,
        fc.constantFrom(...DIALECTS),
        // Clocks from 2001 (Unix seconds past 1e9: what tells the seed's Reset from a delay) to 2096.
        fc.integer({ min: 1_000_000_000_000, max: 4_000_000_000_000 }),
        (view, dialect: Dialect, now) => {
          const first = readRateLimit(writeRateLimit(view, dialect, now), now);
          const again = readRateLimit(writeRateLimit(first, dialect, now), now);
          expect(again).toEqual(first);
          expect(first.dialect).toBe(dialect);
          expect(first.malformed).toEqual([]);
          expect([first.limit, first.remaining]).toEqual([view.limit, view.remaining]);
          // On a whole second every dialect carries the reset exactly.
          const onSecond = Math.floor(now / 1000) * 1000;
          const exact = readRateLimit(writeRateLimit(view, dialect, onSecond), onSecond);
          expect(exact.resetSeconds).toBe(view.resetSeconds);
        },
      ),
      { numRuns: 600 },
    );
  });
});

describe('the fields that told a budget, as the server sent them', () => {
  it('names the fields of the dialect read, with their values, and no other', () => {
    const ietf7 = { ratelimit: 'remaining=0, reset=10', 'ratelimit-policy': '10;w=60' };
    expect(toldFields(ietf7, readRateLimit(ietf7, NOW).dialect)).toBe('RateLimit remaining=0, reset=10');
    const ietf8 = { ratelimit: '"default";r=0;t=30', 'ratelimit-policy': '"default";q=100;w=60' };
    expect(toldFields(ietf8, readRateLimit(ietf8, NOW).dialect)).toBe('RateLimit "default";r=0;t=30');
    const ietf6 = { 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': '7' };
    expect(toldFields(ietf6, readRateLimit(ietf6, NOW).dialect)).toBe(
      'RateLimit-Remaining: 0, RateLimit-Reset: 7',
    );
    // Sent beside an IETF field, the legacy ones are not what was read: not named.
    const both = { ...ietf7, 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '1700000060' };
    expect(toldFields(both, readRateLimit(both, NOW).dialect)).toBe('RateLimit remaining=0, reset=10');
    const seed = {
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': ' 1700000060',
    };
    expect(toldFields(seed, readRateLimit(seed, NOW).dialect)).toBe(
      'X-RateLimit-Remaining: 0, X-RateLimit-Reset: 1700000060',
    );
  });

  it("cuts a hostile server's long value, and names nothing for a dialect it did not send", () => {
    const long = { ratelimit: `remaining=0, reset=10, ${'x=1, '.repeat(100)}` };
    const told = toldFields(long, 'ietf-7') as string;
    expect(told.length).toBeLessThan(100);
    expect(told.endsWith('…')).toBe(true);
    expect(toldFields({ 'x-ratelimit-limit': '60' }, 'seed')).toBeUndefined();
    expect(toldFields({ ratelimit: 'remaining=0' }, 'none')).toBeUndefined();
    expect(toldFields({ ratelimit: 'remaining=0' }, 'toString')).toBeUndefined();
  });
});
