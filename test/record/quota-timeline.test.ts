import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import type { RateLimitView } from '../../src/api/rate-limit-dialect.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import {
  MAX_PAUSE_BANDS,
  type PauseBand,
  QuotaTimeline,
  unionPauses,
} from '../../src/record/quota-timeline.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { FREE_WINDOWS, makeAttempt, okHeaders, operation, T0 } from '../helpers/unit-attempt.ts';

let listPets: Operation;

beforeAll(async () => {
  listPets = await operation('listPets');
});

/** The quota a seed-dialect response announces: Remaining, and its reset `resetSeconds` away. */
const view = (remaining: number, resetSeconds = 30, limit = 60): RateLimitView => ({
  dialect: 'seed',
  alsoSent: [],
  limit,
  remaining,
  resetSeconds,
  policies: [],
  malformed: [],
});

/** A response received `ms` after T0. */
const at = (ms: number, over: Partial<AttemptRecord> = {}) =>
  makeAttempt(listPets, { sentAt: T0 + ms - 5, receivedAt: T0 + ms, json: [], ...over });

/** A 429 received `ms` after T0 whose pause the client kept for `pauseMs`; `null`: no Retry-After. */
const limited = (ms: number, pauseMs: number, retryAfter: string | null = '1') =>
  at(ms, {
    status: 429,
    pauseUntil: T0 + ms + pauseMs,
    headers: { ...okHeaders(T0 + ms), ...(retryAfter === null ? {} : { 'retry-after': retryAfter }) },
  });

describe('QuotaTimeline', () => {
  it('keeps per second the lowest and the last Remaining announced, and the requests and 429s', () => {
    const q = new QuotaTimeline(T0);
    q.add(at(100), view(50));
    q.add(at(400), view(48));
    q.add(at(700), view(49)); // answered out of order: the last is not the lowest
    q.add(limited(900, 500), view(0));
    q.add(at(2500), undefined); // a transport error: counted, nothing announced
    const [key] = q.snapshot();
    expect(key).toMatchObject({ key: 'free', limit: 60 });
    expect(key?.points).toEqual([
      { t: 0, requests: 4, rateLimited: 1, remainingMin: 0, remainingLast: 0 },
      { t: 2, requests: 1, rateLimited: 0 },
    ]);
  });

  it('marks a second where a new window began: Remaining jumped up, or the reset announced before passed', () => {
    const q = new QuotaTimeline(T0);
    q.add(at(100), view(10, 2.5));
    q.add(at(1100), view(9, 1.5));
    q.add(at(2200), view(58, 6)); // jumped up
    q.add(at(3200), view(57, 5));
    q.add(at(4200), view(59, 4)); // up by 2 of 60: requests answered out of order, no new window
    q.add(at(9300), view(59, 6)); // past the reset announced at 4.2 + 4 s, nothing lower: a new window
    q.add(at(20_000), view(1, 1)); // past it, but lower: the same window's later count
    const points = q.snapshot()[0]?.points ?? [];
    expect(points.filter((p) => p.reset).map((p) => p.t)).toEqual([2, 9]);
  });

  it('does not call a trickle back a new window (a sliding log, a token bucket)', () => {
    const q = new QuotaTimeline(T0);
    let remaining = 5;
    for (let s = 0; s < 30; s++) {
      remaining += s % 2 === 0 ? 1 : -1;
      // The reset is always still to come: the bucket is never full again.
      q.add(at(s * 1000 + 10), view(remaining, 10));
    }
    expect(q.snapshot()[0]?.points.some((p) => p.reset)).toBe(false);
  });

  it('joins overlapping pauses into one band and says what told the one that ends it', () => {
    const q = new QuotaTimeline(T0);
    q.add(limited(1000, 2000), view(0));
    q.add(limited(1500, 500, null), view(0, 0)); // inside the first: joined, ends earlier
    q.add(limited(2800, 1200, null), view(0, 1.2)); // overlaps, ends later: the band's end
    q.add(limited(6000, 1000, null), view(0, 0)); // apart: a band of its own, backoff
    q.add(at(7500), view(59)); // no pause of its own
    expect(q.snapshot()[0]?.pauses).toEqual([
      { from: 1, until: 4, by: 'reset', rateLimited: 3 },
      { from: 6, until: 7, by: 'backoff', rateLimited: 1 },
    ]);
  });

  it('keeps the earliest bands and counts the rest, overlapping ones once', () => {
    const q = new QuotaTimeline(T0);
    for (let i = 0; i < MAX_PAUSE_BANDS + 10; i++) {
      q.add(limited(i * 100, 50), view(0));
      // A second 429 inside each pause: joined, whether its band was kept or not.
      q.add(limited(i * 100 + 20, 50), view(0));
    }
    const [key] = q.snapshot();
    expect(key?.pauses).toHaveLength(MAX_PAUSE_BANDS);
    expect(key?.pauses[0]).toEqual({ from: 0, until: 0.07, by: 'retry-after', rateLimited: 2 });
    expect(key?.droppedPauses).toBe(10);
  });

  it('grows with seconds, not requests: a million attempts in 50 s are 50 points', () => {
    const q = new QuotaTimeline(T0);
    // One record reused, as a bounded structure must not keep any of them.
    const a = at(0);
    const v = view(60);
    const limitedView = view(0);
    for (let i = 0; i < 1_000_000; i++) {
      a.receivedAt = T0 + i * 0.05;
      const rateLimited = i % 50 === 49;
      a.status = rateLimited ? 429 : 200;
      a.kind = rateLimited ? 'refused' : 'admitted';
      a.pauseUntil = rateLimited ? a.receivedAt + 1000 : undefined;
      v.remaining = 59 - (i % 50);
      q.add(a, rateLimited ? limitedView : v);
    }
    const [key] = q.snapshot();
    expect(key?.points).toHaveLength(50);
    expect(key?.points.reduce((n, p) => n + p.requests, 0)).toBe(1_000_000);
    expect(key?.points[0]).toMatchObject({ requests: 20_000, rateLimited: 400, remainingMin: 0 });
    // One 429 every 2.5 ms with a 1 s pause: the pauses are one band.
    expect(key?.pauses).toHaveLength(1);
    expect(key?.pauses[0]).toMatchObject({ from: 0.002, rateLimited: 20_000 });
  });

  it('keeps keys apart', () => {
    const q = new QuotaTimeline(T0);
    q.add(at(100), view(59));
    q.add(at(200, { keyLabel: 'free (no key)' }), view(9, 30, 10));
    q.add(at(300), view(58));
    expect(q.snapshot().map((k) => [k.key, k.limit, k.points[0]?.requests])).toEqual([
      ['free', 60, 2],
      ['free (no key)', 10, 1],
    ]);
  });
});

describe('unionPauses', () => {
  it('joins overlapping bands of several parts and keeps the earliest', () => {
    const band = (from: number, until: number, by: PauseBand['by'] = 'retry-after'): PauseBand => ({
      from,
      until,
      by,
      rateLimited: 1,
    });
    expect(unionPauses([band(5, 6), band(1, 3), band(2, 4, 'reset'), band(4, 4.5)]).pauses).toEqual([
      { from: 1, until: 4.5, by: 'retry-after', rateLimited: 3 },
      { from: 5, until: 6, by: 'retry-after', rateLimited: 1 },
    ]);
    const many = Array.from({ length: MAX_PAUSE_BANDS + 3 }, (_, i) => band(i, i + 0.5));
    const { pauses, dropped } = unionPauses(many);
    expect(pauses).toHaveLength(MAX_PAUSE_BANDS);
    expect(dropped).toBe(3);
  });
});

describe('the recorder’s quota timeline', () => {
  it('counts the workload from its start, and reads the headers of a record without a view', () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
    recorder.record(at(100)); // setup
    recorder.measure(true, T0 + 2000);
    recorder.record(at(2100, { headers: okHeaders(T0 + 2100, { 'x-ratelimit-remaining': '41' }) }));
    recorder.record(at(3500, { rateLimitView: view(40) }));
    recorder.measure(false);
    recorder.record(at(9000)); // teardown
    expect(recorder.quota.snapshot()).toEqual([
      {
        key: 'free',
        limit: 60,
        points: [
          { t: 0, requests: 1, rateLimited: 0, remainingMin: 41, remainingLast: 41 },
          { t: 1, requests: 1, rateLimited: 0, remainingMin: 40, remainingLast: 40 },
        ],
        pauses: [],
      },
    ]);
  });
});
