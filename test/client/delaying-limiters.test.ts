import { afterAll, beforeAll, describe, it } from 'vitest';
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
 * A longer run, a slow service with nothing in front and nginx with nodelay are
 * test/client/delaying-model.test.ts, against models of these limiters in simulated time.
 */

const SECONDS = 8;
const workload = { executor: 'constant-vus', vus: HELD_USERS, duration: `${SECONDS}s` } as const;

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
    through(
      await startNginxLimitReq({
        upstream: plain.url,
        rate: `${QUEUE_LIMITER.perSecond}r/s`,
        burst: QUEUE_LIMITER.burst,
      }),
    ),
    through(await startExpressSlowDown({ upstream: forSlowDown.url, ...SLOW_DOWN_LIMITER })),
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

  it('express-slow-down: a slow-down adding 100 ms a request, named with its step', () => {
    console.log(`express-slow-down: ${figures(slowed)}`);
    expectHeldBySlowDown(slowed);
  });
});
