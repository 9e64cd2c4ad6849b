import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { BenchFeed } from '../../src/bench/feed.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { FREE_WINDOWS, operation, T0 } from '../helpers/unit-attempt.ts';

let listPets: Operation;
beforeAll(async () => {
  listPets = await operation('listPets');
});

describe("BenchFeed: autocannon's answers read by the one classifier", () => {
  it('counts the refusals of a limiter that says no with 503 or 403, as their headers or --refusal-status say', () => {
    const feed = (named: Set<number>) => {
      const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, checks: [], clientChecks: [] });
      const f = new BenchFeed(recorder, [listPets], 'free', named);
      // Header names as the server wrote them: autocannon does not lower-case them.
      f.response(0, 200, '[]', { 'Content-Type': 'application/json' }, T0 + 10, 2, undefined);
      f.response(0, 503, '', { 'Retry-After': '2' }, T0 + 20, 2, undefined);
      f.response(0, 503, '', {}, T0 + 30, 2, undefined);
      f.response(0, 403, '{}', { 'X-RateLimit-Remaining': '0' }, T0 + 40, 2, undefined);
      f.response(0, 403, '{}', {}, T0 + 50, 2, undefined);
      return recorder.overall;
    };
    const told = feed(new Set());
    expect(told.refusals).toEqual({ 403: 1, 503: 1 });
    expect(told.unexplained).toBe(1);
    const named = feed(new Set([403, 503]));
    expect(named.refusals).toEqual({ 403: 2, 503: 2 });
    expect(named.unexplained).toBe(0);
    expect(named.rateLimited).toBe(4);
  });
});
