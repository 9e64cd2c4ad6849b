import { expect } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';

/**
 * What a run through a third-party limiter must show of its outcome, judged alike whether the limiter
 * was the real component (test/client/*-limiters.test.ts, real-limiters.test.ts) or its model in
 * simulated time (test/client/*-model.test.ts, third-party-models.test.ts). What differs between the
 * two, the length of the run above all, is passed in; so is a bound one of them holds alone.
 */

/**
 * The case the concurrency verdicts judge: nginx `limit_conn` of 2 per key over an upstream answering
 * in 300 ms (at most 2 / 0.3 s = 6.67 requests a second), 4 users, and a plan that does not bind (100
 * a second), so that the limit in flight is all that holds them.
 */
export const LIMIT_CONN_CASE = { upstreamLatencyMs: 300, conn: 2, vus: 4 } as const;
export const LOOSE: RateWindow[] = [{ name: 'minute', limit: 6000, seconds: 60 }];

/** The figures a concurrency verdict prints when it fails. */
export const concurrencyFigures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    rate: r.overall.rate,
    rateLimited: r.overall.rateLimited,
    limiter: r.compliance.limiter,
  });

/**
 * `vus` users against a limit of `conn` in flight per key they were not told of (nginx `limit_conn`,
 * a bare 429 at once): the cap learned from the first 429s and kept, nothing else refused. The rate
 * it implies is the caller's to bound, the real run's and the model's bounds being of different kinds.
 */
export function expectLearnedConcurrencyCap(learned: RunResult, o: { conn: number; vus: number }): void {
  // Only the first `vus` requests at once can be refused: at most vus - conn of them.
  expect(learned.overall.rateLimited, concurrencyFigures(learned)).toBeLessThanOrEqual(o.vus - o.conn);
  expect(learned.compliance.limiter, concurrencyFigures(learned)).toMatchObject({
    model: 'concurrency',
    given: false,
    maxInFlight: o.conn,
    // Not taken for a GCRA: no gap kept, no rate halved.
    gapMs: 0,
    rateCuts: 0,
  });
  expect(learned.compliance.violations).toBe(0);
  expect(resultProblem(JSON.parse(JSON.stringify(learned)))).toBeUndefined();
}

/** The summary of `expectLearnedConcurrencyCap`'s run: the cap kept, and how many 429s lowered it. */
export function expectConcurrencyCutsInSummary(learned: RunResult, o: { conn: number; vus: number }): void {
  const summary = formatSummary(learned, undefined);
  const cut = summary.match(
    new RegExp(
      `limiter: concurrency \\(learned from 429s that came while others of the key were in flight\\); at most ${o.conn} requests of the key in flight \\((\\d+) 429s? lowered it\\)`,
    ),
  );
  expect(cut, summary).not.toBeNull();
  // How many cuts depends on which of the first 429s arrives first (with 4 users and a limit of 2, one
  // that finds 3 in flight lowers the cap to 3, the next to 2); each cut is a 429 and lowers the cap by
  // one at least, from the users down to the limit: at least one, at most vus - conn.
  const cuts = Number(cut?.[1]);
  expect(cuts).toBeGreaterThanOrEqual(1);
  expect(cuts).toBeLessThanOrEqual(o.vus - o.conn);
}

/**
 * The cases the verdicts on held responses judge: 4 users in raw mode, a plan that does not bind (the
 * limiter in front is all that slows the users), through nginx `limit_req` as a queue or through
 * express-slow-down.
 */
export const HELD_USERS = 4;
export const UNBOUND: RateWindow[] = [{ name: 'second', limit: 1000, seconds: 1 }];
export const QUEUE_LIMITER = { perSecond: 2, burst: 5 } as const;
export const SLOW_DOWN_LIMITER = {
  delayAfter: 10,
  delayMs: 100,
  windowMs: 60_000,
  maxDelayMs: 1500,
} as const;

/** The figures a verdict on held responses prints when it fails. */
export const heldFigures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    statuses: r.overall.statuses,
    p50: r.overall.service.p50,
    p99: r.overall.service.p99,
    held: r.compliance.heldByLimiter && { ...r.compliance.heldByLimiter, unheldHistogram: undefined },
  });

/**
 * 4 users in raw mode through nginx `limit_req` 2r/s with a burst of 5 and no nodelay, a queue: the
 * responses it held named as a queue's in the result and the summary.
 */
export function expectHeldByQueue(queued: RunResult): void {
  const held = queued.compliance.heldByLimiter;
  expect(resultProblem(queued)).toBeUndefined();
  expect(held?.kind, heldFigures(queued)).toBe('queue');
  // Every answer but the very first waited in the queue: allow a few lost to a late wake-up.
  const answered = queued.overall.statuses['200'] ?? 0;
  expect(held?.responses, heldFigures(queued)).toBeGreaterThan(answered * 0.8);
  expect(held?.responses, heldFigures(queued)).toBeLessThan(answered);
  // The service time without them is every other response's: the first, at the service's own pace
  // (over real sockets its connection's set-up included: 2 to 112 ms measured), well below the held
  // ones'.
  expect((held?.unheld.count ?? 0) + (held?.responses ?? 0)).toBe(queued.overall.requests);
  expect(held?.unheld.max).toBeLessThan(queued.overall.service.p50 / 2);
  expect(held?.intervalMs).toBeGreaterThan(450);
  expect(held?.intervalMs).toBeLessThan(550);
  // Four users in a queue releasing one every 500 ms: each waited about four releases.
  expect(held?.longestMs).toBeGreaterThan(1000);
  expect(held?.longestMs).toBeLessThan(3000);
  expect(formatSummary(queued, undefined)).toMatch(
    /\n\d+ responses held by the target's limiter \(a queue releasing 2\/s\): [\d.]+ s in all, [\d.]+ s the longest — latency beyond the service's own, included in the latency percentiles; without them, service p50 [\d.]+ ms, p99 [\d.]+ ms\n/,
  );
}

/**
 * 4 users in raw mode through express-slow-down (delayAfter 10, delayMs 100, maxDelayMs 1500): the
 * responses it held named as a slow-down's, with its step.
 */
export function expectHeldBySlowDown(slowed: RunResult): void {
  const held = slowed.compliance.heldByLimiter;
  expect(resultProblem(slowed)).toBeUndefined();
  // Its cap (1.5 s) reached, four users are answered at a steady interval as if from a queue: still its.
  expect(held?.kind, heldFigures(slowed)).toBe('slow-down');
  expect(held?.stepMs).toBeGreaterThan(90);
  expect(held?.stepMs).toBeLessThan(110);
  // Past its tenth request, every answer was slowed: most of them named.
  const answered = slowed.overall.statuses['200'] ?? 0;
  expect(held?.responses, heldFigures(slowed)).toBeGreaterThan((answered - 10) * 0.7);
  expect(held?.responses, heldFigures(slowed)).toBeLessThanOrEqual(answered - 10);
  expect((held?.unheld.count ?? 0) + (held?.responses ?? 0)).toBe(slowed.overall.requests);
  expect(formatSummary(slowed, undefined)).toContain("held by the target's limiter (a slow-down adding");
}

/** The figures a verdict on a rate limiter's run prints when it fails. */
export const rateFigures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    ok: r.overall.statuses['200'],
    rateLimited: r.overall.rateLimited,
    violations: r.compliance.violations,
    utilisation: r.compliance.quotaUtilization,
    limiter: r.compliance.limiter,
  });

/**
 * Raw mode at 3x the rate of nginx `limit_req` (`perSecond`, no burst, a bare 429) for `seconds`:
 * a few 429s, never a storm, nothing sent while a pause holds.
 */
export function expectRawThroughBareGcra(raw: RunResult, o: { perSecond: number; seconds: number }): void {
  // 3x of 2 a second is 6 sends a second for 2 admissions: a client deaf to the bare 429s meets about
  // 4 a second, 120 in 30 s. The bound is the 30 s run's; a 10 s run (about 40 such 429s) is held to
  // it too, which there allows at most half of those 40.
  expect(raw.overall.rateLimited, rateFigures(raw)).toBeLessThanOrEqual(20);
  expect(raw.compliance.violations, rateFigures(raw)).toBe(0);
  // Not starved into silence either: most of the limiter's rate is used.
  expect(raw.overall.statuses['200'] ?? 0, rateFigures(raw)).toBeGreaterThanOrEqual(
    0.5 * o.perSecond * o.seconds,
  );
  // Each 429 told no wait: the rate was cut, and the result says how often.
  expect(raw.compliance.limiter?.rateCuts ?? 0).toBeGreaterThanOrEqual(1);
  expect(resultProblem(raw)).toBeUndefined();
}

/**
 * Paced through express-rate-limit (`limit` per window, IETF draft-8 fields only) with a plan told
 * twice its limit, for `windows` of its windows: the fields read, at most one 429, 95% of the real
 * limit used.
 */
export function expectIetf8LimitKept(ietf8: RunResult, o: { limit: number; windows: number }): void {
  expect(ietf8.overall.rateLimited, rateFigures(ietf8)).toBeLessThanOrEqual(1);
  expect(ietf8.compliance.violations, rateFigures(ietf8)).toBe(0);
  // express-rate-limit's windows start at the first request: the run spans `windows` of them.
  expect(ietf8.overall.statuses['200'] ?? 0, rateFigures(ietf8)).toBeGreaterThanOrEqual(
    0.95 * o.windows * o.limit,
  );
}
