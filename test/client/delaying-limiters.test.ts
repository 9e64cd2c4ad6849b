import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import {
  expectHeldByQueue,
  expectHeldBySlowDown,
  heldFigures as figures,
  HELD_USERS,
  QUEUE_LIMITER,
  SLOW_DOWN_LIMITER,
  UNBOUND,
} from '../helpers/limiter-verdicts.ts';
import { type RunningLimiter, startExpressSlowDown, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * Runs in raw mode (4 users, each sending again as soon as it is answered) through the real nginx
 * queue and express-slow-down, which delay rather than refuse: the result must name the responses
 * they held, told from their timing over real sockets. The two go side by side, each with its own
 * upstream. 8 s each: the queue's answers are judged 8 at a time (src/record/held-by-limiter.ts), and
 * at 2 a second 8 s is two such windows; the slow-down's first 10 requests go through at once and its
 * climb of 100 ms a request reaches its cap of 1.5 s at the 25th, which four users reach within 8 s.
 * nginx at 20 a second too, its holds a tenth as long (50 ms to 200), which must stand clear of the
 * service's own spread as well (src/record/service-spread.ts) and be read at their rate.
 * A longer run, a slow service with nothing in front and nginx with nodelay are
 * test/client/delaying-model.test.ts, against models of these limiters in simulated time.
 */

const SECONDS = 8;
const workload = { executor: 'constant-vus', vus: HELD_USERS, duration: `${SECONDS}s` } as const;

/** A queue ten times as quick: 20 releases a second, one per 50 ms. */
const FAST_QUEUE_PER_S = 20;

let upstreams: RunningServer[] = [];
let queued: RunResult;
let slowed: RunResult;
let fastQueued: RunResult;

beforeAll(async () => {
  const [plain, forSlowDown, forFast] = await Promise.all([
    startServer({ rateLimit: false, seedData: 3 }),
    startServer({ rateLimit: false, seedData: 3 }),
    startServer({ rateLimit: false, seedData: 3 }),
  ]);
  upstreams = [plain, forSlowDown, forFast];
  [queued, slowed, fastQueued] = await Promise.all([
    through(
      await startNginxLimitReq({
        upstream: plain.url,
        rate: `${QUEUE_LIMITER.perSecond}r/s`,
        burst: QUEUE_LIMITER.burst,
      }),
    ),
    through(await startExpressSlowDown({ upstream: forSlowDown.url, ...SLOW_DOWN_LIMITER })),
    through(
      await startNginxLimitReq({
        upstream: forFast.url,
        rate: `${FAST_QUEUE_PER_S}r/s`,
        burst: QUEUE_LIMITER.burst,
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

describe('responses a real delaying limiter held', () => {
  it('nginx limit_req with a burst and no nodelay: a queue releasing 2/s, named in the result and the summary', () => {
    console.log(`nginx queue: ${figures(queued)}`);
    expectHeldByQueue(queued);
  });

  it('nginx limit_req at 20r/s with a burst and no nodelay: a queue releasing one per 50 ms (within 10%)', () => {
    const held = fastQueued.compliance.heldByLimiter;
    console.log(`nginx queue at ${FAST_QUEUE_PER_S}/s: ${figures(fastQueued)}`);
    expect(held?.kind, figures(fastQueued)).toBe('queue');
    const answered = fastQueued.overall.statuses['200'] ?? 0;
    // Most answers; fewer than the 2r/s queue's share, as an answer late by a few ms breaks the steady
    // gaps of the eight it is judged with, and at 50 ms that is a larger part of an interval.
    expect(held?.responses, figures(fastQueued)).toBeGreaterThan(answered / 2);
    const interval = 1000 / FAST_QUEUE_PER_S;
    expect(Math.abs((held?.intervalMs ?? 0) - interval) / interval, figures(fastQueued)).toBeLessThanOrEqual(
      0.1,
    );
  });

  it('express-slow-down: a slow-down adding 100 ms a request, named with its step', () => {
    console.log(`express-slow-down: ${figures(slowed)}`);
    expectHeldBySlowDown(slowed);
  });
});
