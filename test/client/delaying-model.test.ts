import { beforeAll, describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import type { ServerOptions } from '../../src/server/options.ts';
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
const workload = { executor: 'constant-vus', vus: HELD_USERS, duration: `${SECONDS}s` } as const;
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
  queued = await through(PLAIN, (u) => limitReq(u, QUEUE_LIMITER));
  slowed = await through(PLAIN, (u) => slowDown(u, SLOW_DOWN_LIMITER));
  jittery = await through({ ...PLAIN, faults: { latencyMs: 200, jitterMs: 100 } });
  refused = await through(PLAIN, (u) => limitReq(u, { ...QUEUE_LIMITER, nodelay: true }));
}, 120_000);

describe('responses a model of a delaying limiter held', () => {
  it('nginx limit_req with a burst and no nodelay: a queue releasing 2/s, named in the result and the summary', () => {
    expectHeldByQueue(queued);
  });

  it('express-slow-down: a slow-down adding 100 ms a request, named with its step', () => {
    expectHeldBySlowDown(slowed);
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
