import { beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import {
  expectConcurrencyCutsInSummary,
  expectLearnedConcurrencyCap,
  concurrencyFigures as figures,
  LIMIT_CONN_CASE,
  LOOSE,
} from '../helpers/limiter-verdicts.ts';
import { inSimulatedTime, simulatedServer } from '../helpers/simulated.ts';
import { limitConn } from '../helpers/simulated-limiters.ts';

/**
 * The client against a concurrency limit it was not told of, in simulated time: nginx `limit_conn` 2
 * per key as its model (test/helpers/simulated-limiters.ts: a bare 429 at once when the key has 2 in
 * flight) in front of an upstream that answers in 300 ms, so that at most 2 / 0.3 s = 6.67 requests a
 * second can be had. Four virtual users for 35 s with a plan that does not bind (100 a second): the
 * 429s of the first four requests at once must teach the cap, and the rest of the run keep two in
 * flight without another 429. Beside it, the same told in advance (`--limiter concurrency:2`): no 429
 * at all. That the real nginx answers as the model does is test/client/concurrency-limiters.test.ts.
 */

const { upstreamLatencyMs: UPSTREAM_LATENCY_MS, conn: CONN, vus: VUS } = LIMIT_CONN_CASE;
const DURATION_S = 35;

let learned: RunResult;
let given: RunResult;

async function runAgainst(maxInFlight?: number): Promise<RunResult> {
  const upstream = await simulatedServer({
    rateLimit: false,
    seedData: 3,
    faults: { latencyMs: UPSTREAM_LATENCY_MS },
  });
  const transport: Transport = limitConn(upstream.transport, CONN);
  try {
    return await inSimulatedTime(() =>
      runListAgainst(upstream.url, {
        transport,
        workload: { executor: 'constant-vus', vus: VUS, duration: `${DURATION_S}s` },
        windows: LOOSE,
        enforce: true,
        ...(maxInFlight === undefined ? {} : { limiter: 'concurrency' as const, maxInFlight }),
      }),
    );
  } finally {
    await upstream.close();
  }
}

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  learned = await runAgainst();
  given = await runAgainst(CONN);
}, 120_000);

describe('a limit_conn model of 2 per key over a 300 ms upstream, 4 virtual users for 35 s', () => {
  it('learned: at most 2 429s and at least 6.0 requests a second, the cap of 2 in the result', () => {
    expectLearnedConcurrencyCap(learned, { conn: CONN, vus: VUS });
    // Within 10% of the ceiling of 2 / 0.3 s = 6.67 a second: two kept in flight all the run long, not
    // only past the learning. Simulated time has no slow sockets to blur it, as the real nginx's run has.
    expect(learned.overall.rate, figures(learned)).toBeGreaterThanOrEqual(6.0);
  });

  it('given with --limiter concurrency:2: no 429 at all, at the same rate', () => {
    expect(given.overall.rateLimited, figures(given)).toBe(0);
    expect(given.overall.rate, figures(given)).toBeGreaterThanOrEqual(6.0);
    expect(given.compliance.limiter).toMatchObject({ model: 'concurrency', given: true, maxInFlight: CONN });
  });

  it('the summary says what was kept, and how many 429s lowered it', () => {
    expectConcurrencyCutsInSummary(learned, { conn: CONN, vus: VUS });
  });
});
