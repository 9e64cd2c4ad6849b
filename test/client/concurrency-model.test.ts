import { beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
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

const UPSTREAM_LATENCY_MS = 300;
const CONN = 2;
const VUS = 4;
const DURATION_S = 35;
const LOOSE: RateWindow[] = [{ name: 'minute', limit: 6000, seconds: 60 }];

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

const figures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    rate: r.overall.rate,
    rateLimited: r.overall.rateLimited,
    limiter: r.compliance.limiter,
  });

describe('a limit_conn model of 2 per key over a 300 ms upstream, 4 virtual users for 35 s', () => {
  it('learned: at most 2 429s and at least 6.0 requests a second, the cap of 2 in the result', () => {
    expect(learned.overall.rateLimited, figures(learned)).toBeLessThanOrEqual(VUS - CONN);
    expect(learned.overall.rate, figures(learned)).toBeGreaterThanOrEqual(6.0);
    expect(learned.compliance.limiter, figures(learned)).toMatchObject({
      model: 'concurrency',
      given: false,
      maxInFlight: CONN,
      // Not taken for a GCRA: no gap kept, no rate halved.
      gapMs: 0,
      rateCuts: 0,
    });
    expect(learned.compliance.violations).toBe(0);
    expect(resultProblem(JSON.parse(JSON.stringify(learned)))).toBeUndefined();
  });

  it('given with --limiter concurrency:2: no 429 at all, at the same rate', () => {
    expect(given.overall.rateLimited, figures(given)).toBe(0);
    expect(given.overall.rate, figures(given)).toBeGreaterThanOrEqual(6.0);
    expect(given.compliance.limiter).toMatchObject({ model: 'concurrency', given: true, maxInFlight: CONN });
  });

  it('the summary says what was kept, and how many 429s lowered it', () => {
    const summary = formatSummary(learned, undefined);
    const cut = summary.match(
      /limiter: concurrency \(learned from 429s that came while others of the key were in flight\); at most 2 requests of the key in flight \((\d+) 429s? lowered it\)/,
    );
    expect(cut, summary).not.toBeNull();
    // How many cuts depends on which of the first 429s arrives first (one that finds 3 in flight
    // lowers the cap to 3, the next to 2); each cut is a 429 and lowers the cap by one at least, from
    // the 4 users down to 2: at least one, at most VUS - CONN.
    const cuts = Number(cut?.[1]);
    expect(cuts).toBeGreaterThanOrEqual(1);
    expect(cuts).toBeLessThanOrEqual(VUS - CONN);
  });
});
