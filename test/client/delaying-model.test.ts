import { beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import { inSimulatedTime, simulatedServer } from '../helpers/simulated.ts';
import { limitReq, slowDown } from '../helpers/simulated-limiters.ts';

/**
 * Runs in raw mode (4 users, each sending again as soon as it is answered) through models of
 * limiters that delay rather than refuse (test/helpers/simulated-limiters.ts), and against a slow,
 * jittery service with nothing in front, in simulated time: the result must name the responses the
 * limiters held, and none of the service's own. That the real nginx and express-slow-down hold as
 * their models do is test/client/delaying-limiters.test.ts.
 */

const SECONDS = 15;
/** A plan that does not bind: the limiter in front is all that slows the users. */
const UNBOUND: RateWindow[] = [{ name: 'second', limit: 1000, seconds: 1 }];
const workload = { executor: 'constant-vus', vus: 4, duration: `${SECONDS}s` } as const;
const PLAIN: ServerOptions = { rateLimit: false, seedData: 3 };

let queued: RunResult;
let slowed: RunResult;
let jittery: RunResult;
let refused: RunResult;

async function through(
  options: ServerOptions,
  limiter: (upstream: Transport) => Transport = (upstream) => upstream,
): Promise<RunResult> {
  const upstream = await simulatedServer(options);
  try {
    return await inSimulatedTime(() =>
      runListAgainst(upstream.url, {
        transport: limiter(upstream.transport),
        workload,
        windows: UNBOUND,
        enforce: false,
      }),
    );
  } finally {
    await upstream.close();
  }
}

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  queued = await through(PLAIN, (u) => limitReq(u, { perSecond: 2, burst: 5 }));
  slowed = await through(PLAIN, (u) =>
    slowDown(u, { delayAfter: 10, delayMs: 100, windowMs: 60_000, maxDelayMs: 1500 }),
  );
  jittery = await through({ ...PLAIN, faults: { latencyMs: 200, jitterMs: 100 } });
  refused = await through(PLAIN, (u) => limitReq(u, { perSecond: 2, burst: 5, nodelay: true }));
}, 120_000);

const figures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    statuses: r.overall.statuses,
    p50: r.overall.service.p50,
    p99: r.overall.service.p99,
    held: r.compliance.heldByLimiter && { ...r.compliance.heldByLimiter, unheldHistogram: undefined },
  });

describe('responses a model of a delaying limiter held', () => {
  it('nginx limit_req with a burst and no nodelay: a queue releasing 2/s, named in the result and the summary', () => {
    const held = queued.compliance.heldByLimiter;
    expect(resultProblem(queued)).toBeUndefined();
    expect(held?.kind, figures(queued)).toBe('queue');
    // Every answer but the very first waited in the queue: allow a few lost to a late wake-up.
    const answered = queued.overall.statuses['200'] ?? 0;
    expect(held?.responses, figures(queued)).toBeGreaterThan(answered * 0.8);
    expect(held?.responses, figures(queued)).toBeLessThan(answered);
    // The service time without them is every other response's: the first, at the service's own
    // pace, well below the held ones'.
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
    expect(resultProblem(slowed)).toBeUndefined();
    // Its cap (1.5 s) reached, four users are answered at a steady interval as if from a queue: still its.
    expect(held?.kind, figures(slowed)).toBe('slow-down');
    expect(held?.stepMs).toBeGreaterThan(90);
    expect(held?.stepMs).toBeLessThan(110);
    // Past its tenth request, every answer was slowed: most of them named.
    const answered = slowed.overall.statuses['200'] ?? 0;
    expect(held?.responses, figures(slowed)).toBeGreaterThan((answered - 10) * 0.7);
    expect(held?.responses, figures(slowed)).toBeLessThanOrEqual(answered - 10);
    expect((held?.unheld.count ?? 0) + (held?.responses ?? 0)).toBe(slowed.overall.requests);
    expect(formatSummary(slowed, undefined)).toContain("held by the target's limiter (a slow-down adding");
  });

  it('a service slow by 200 ms and up to 100 ms of jitter, nothing in front: nothing named held', () => {
    expect(jittery.overall.service.p50).toBeGreaterThan(200);
    expect(jittery.compliance.heldByLimiter, figures(jittery)).toBeUndefined();
    expect(formatSummary(jittery, undefined)).not.toContain('held by');
  });

  it('the same nginx with nodelay, which refuses past its burst and holds nothing: nothing named held', () => {
    expect(refused.overall.rateLimited).toBeGreaterThan(0);
    expect(refused.compliance.heldByLimiter, figures(refused)).toBeUndefined();
  });
});
