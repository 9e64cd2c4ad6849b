import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import { type RunningLimiter, startExpressSlowDown, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * Runs in raw mode (4 users, each sending again as soon as it is answered) through the real nginx
 * queue and express-slow-down, which delay rather than refuse: the result must name the responses
 * they held, told from their timing over real sockets. The two go side by side, each with its own
 * upstream. 8 s each: the queue's answers are judged 8 at a time (src/record/held-by-limiter.ts), and
 * at 2 a second 8 s is two such windows; the slow-down's first 10 requests go through at once and its
 * climb of 100 ms a request reaches its cap of 1.5 s at the 25th, which four users reach within 8 s.
 * A longer run, a slow service with nothing in front and nginx with nodelay are
 * test/client/delaying-model.test.ts, against models of these limiters in simulated time.
 */

const SECONDS = 8;
/** A plan that does not bind: the limiter in front is all that slows the users. */
const UNBOUND: RateWindow[] = [{ name: 'second', limit: 1000, seconds: 1 }];
const workload = { executor: 'constant-vus', vus: 4, duration: `${SECONDS}s` } as const;

let upstreams: RunningServer[] = [];
let queued: RunResult;
let slowed: RunResult;

beforeAll(async () => {
  const [plain, forSlowDown] = await Promise.all([
    startServer({ rateLimit: false, seedData: 3 }),
    startServer({ rateLimit: false, seedData: 3 }),
  ]);
  upstreams = [plain, forSlowDown];
  [queued, slowed] = await Promise.all([
    through(await startNginxLimitReq({ upstream: plain.url, rate: '2r/s', burst: 5 })),
    through(
      await startExpressSlowDown({
        upstream: forSlowDown.url,
        delayAfter: 10,
        delayMs: 100,
        windowMs: 60_000,
        maxDelayMs: 1500,
      }),
    ),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
});

async function through(limiter: RunningLimiter): Promise<RunResult> {
  try {
    return await runListAgainst(limiter.url, { workload, windows: UNBOUND, enforce: false });
  } finally {
    await limiter.stop();
  }
}

const figures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    statuses: r.overall.statuses,
    p50: r.overall.service.p50,
    p99: r.overall.service.p99,
    held: r.compliance.heldByLimiter && { ...r.compliance.heldByLimiter, unheldHistogram: undefined },
  });

describe('responses a real delaying limiter held', () => {
  it('nginx limit_req with a burst and no nodelay: a queue releasing 2/s, named in the result and the summary', () => {
    const held = queued.compliance.heldByLimiter;
    console.log(`nginx queue: ${figures(queued)}`);
    expect(resultProblem(queued)).toBeUndefined();
    expect(held?.kind, figures(queued)).toBe('queue');
    // Every answer but the very first waited in the queue: allow a few lost to a late wake-up.
    const answered = queued.overall.statuses['200'] ?? 0;
    expect(held?.responses).toBeGreaterThan(answered * 0.8);
    expect(held?.responses).toBeLessThan(answered);
    // The service time without them is every other response's: the first, at the service's own pace
    // (its connection's set-up included: 2 to 112 ms measured), well below the held ones'.
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
  });

  it('express-slow-down: a slow-down adding 100 ms a request, named with its step', () => {
    const held = slowed.compliance.heldByLimiter;
    console.log(`express-slow-down: ${figures(slowed)}`);
    expect(resultProblem(slowed)).toBeUndefined();
    // Its cap (1.5 s) reached, four users are answered at a steady interval as if from a queue: still its.
    expect(held?.kind, figures(slowed)).toBe('slow-down');
    expect(held?.stepMs).toBeGreaterThan(90);
    expect(held?.stepMs).toBeLessThan(110);
    // Past its tenth request, every answer was slowed: most of them named.
    const answered = slowed.overall.statuses['200'] ?? 0;
    expect(held?.responses).toBeGreaterThan((answered - 10) * 0.7);
    expect(held?.responses).toBeLessThanOrEqual(answered - 10);
    expect((held?.unheld.count ?? 0) + (held?.responses ?? 0)).toBe(slowed.overall.requests);
    expect(formatSummary(slowed, undefined)).toContain("held by the target's limiter (a slow-down adding");
  });
});
