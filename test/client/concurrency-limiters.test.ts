import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import {
  expectConcurrencyCutsInSummary,
  expectLearnedConcurrencyCap,
  concurrencyFigures as figures,
  LIMIT_CONN_CASE,
  LOOSE,
} from '../helpers/limiter-verdicts.ts';
import { type RunningLimiter, startNginxLimitConn } from '../helpers/limiters.ts';

/**
 * The client against the real nginx `limit_conn` 2 per key (`limit_conn_status 429`, a bare 429) it
 * was not told of, in front of an upstream that answers in 300 ms, so that at most 2 / 0.3 s = 6.67
 * requests a second can be had. What only the real nginx can show is that its 429s, over real
 * sockets, teach the client the cap: four virtual users with a plan that does not bind (100 a
 * second) learn it from the first requests and then keep two in flight. 12 s is 40 round trips of
 * each of the 2 allowed requests: past the few of the learning, the rest of the run shows whether two
 * were kept in flight or the users fell back to one. How close to the ceiling of 6.67 a second the
 * client keeps (6.0 over 35 s) is a figure of its scheduling, not of nginx, and a loaded machine's
 * slow sockets move it: test/client/concurrency-model.test.ts holds it against a model of this
 * nginx in simulated time, beside the cap told in advance.
 */

const { upstreamLatencyMs: UPSTREAM_LATENCY_MS, conn: CONN, vus: VUS } = LIMIT_CONN_CASE;
const DURATION_S = 12;

let upstream: RunningServer;
let limiter: RunningLimiter;
let learned: RunResult;

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3, faults: { latencyMs: UPSTREAM_LATENCY_MS } });
  limiter = await startNginxLimitConn({ upstream: upstream.url, conn: CONN });
  learned = await runListAgainst(limiter.url, {
    workload: { executor: 'constant-vus', vus: VUS, duration: `${DURATION_S}s` },
    windows: LOOSE,
    enforce: true,
  });
}, 60_000);

afterAll(async () => {
  await limiter?.stop();
  await upstream?.close();
});

describe('real nginx limit_conn 2 per key over a 300 ms upstream, 4 virtual users for 12 s', () => {
  it('learned from real 429s: at most 2 of them, two kept in flight, the cap of 2 in the result', () => {
    expectLearnedConcurrencyCap(learned, { conn: CONN, vus: VUS });
    // One request in flight at a time gets 1000 / 300 = 3.33 a second at most: more is two kept. Less
    // than the model's 6.0: how close to the ceiling the client keeps is its scheduling's, which a
    // loaded machine's slow sockets move.
    expect(learned.overall.rate, figures(learned)).toBeGreaterThan(1000 / UPSTREAM_LATENCY_MS);
  });

  it('the summary says what was kept, and how many 429s lowered it', () => {
    expectConcurrencyCutsInSummary(learned, { conn: CONN, vus: VUS });
  });
});
