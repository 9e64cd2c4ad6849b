import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import { type RunningLimiter, startNginxLimitConn } from '../helpers/limiters.ts';

/**
 * The client against a concurrency limit it was not told of: nginx `limit_conn` 2 per key
 * (`limit_conn_status 429`, a bare 429) in front of an upstream that answers in 300 ms, so that at
 * most 2 / 0.3 s = 6.67 requests a second can be had. Four virtual users for 35 s with a plan that
 * does not bind (100 a second): the 429s of the first four requests at once must teach the cap, and
 * the rest of the run keep two in flight without another 429. Beside it, the same told in advance
 * (`--limiter concurrency:2`): no 429 at all.
 */

const UPSTREAM_LATENCY_MS = 300;
const CONN = 2;
const VUS = 4;
const DURATION_S = 35;
const LOOSE: RateWindow[] = [{ name: 'minute', limit: 6000, seconds: 60 }];

let upstream: RunningServer;
let learned: RunResult;
let given: RunResult;

async function runAgainst(limiter: RunningLimiter, maxInFlight?: number): Promise<RunResult> {
  try {
    return await runListAgainst(limiter.url, {
      workload: { executor: 'constant-vus', vus: VUS, duration: `${DURATION_S}s` },
      windows: LOOSE,
      enforce: true,
      ...(maxInFlight === undefined ? {} : { limiter: 'concurrency' as const, maxInFlight }),
    });
  } finally {
    await limiter.stop();
  }
}

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3, faults: { latencyMs: UPSTREAM_LATENCY_MS } });
  const limiter = () => startNginxLimitConn({ upstream: upstream.url, conn: CONN });
  [learned, given] = await Promise.all([
    limiter().then((l) => runAgainst(l)),
    limiter().then((l) => runAgainst(l, CONN)),
  ]);
}, 120_000);

afterAll(async () => {
  await upstream?.close();
});

const figures = (r: RunResult) =>
  JSON.stringify({
    sent: r.overall.requests,
    rate: r.overall.rate,
    rateLimited: r.overall.rateLimited,
    limiter: r.compliance.limiter,
  });

describe('nginx limit_conn 2 per key over a 300 ms upstream, 4 virtual users for 35 s', () => {
  it('learned: at most 2 429s and at least 6.0 requests a second, the cap of 2 in the result', () => {
    expect(learned.overall.rateLimited, figures(learned)).toBeLessThanOrEqual(2);
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

  it('the summary says what was kept', () => {
    // How many 429s lowered the cap depends on which comes back first: the first requests go out
    // at levels 1 to VUS and those past CONN are refused. The one sent at level 3 lowers the cap to
    // 2 at once (one cut; the one at 4 then teaches nothing); the one at 4 first lowers it to 3,
    // and the one at 3 then to 2 (two cuts). Each cut lowers the cap by one at least, from VUS - 1
    // at most to CONN, and none comes back up within the run (a probe waits a minute after a cut):
    // so 1 to VUS - CONN cuts, and never more than the 429s the run drew.
    const cuts = learned.compliance.limiter?.inFlightCuts ?? 0;
    expect(cuts, figures(learned)).toBeGreaterThanOrEqual(1);
    expect(cuts, figures(learned)).toBeLessThanOrEqual(Math.min(VUS - CONN, learned.overall.rateLimited));
    expect(formatSummary(learned, undefined)).toMatch(
      new RegExp(
        `limiter: concurrency \\(learned from 429s that came while others of the key were in flight\\); at most 2 requests of the key in flight \\(${cuts} 429s? lowered it\\)`,
      ),
    );
  });
});
