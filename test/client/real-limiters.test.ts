import { afterAll, beforeAll, describe, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import type { RunResult } from '../../src/result/types.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import { expectIetf8LimitKept, expectRawThroughBareGcra } from '../helpers/limiter-verdicts.ts';
import { type RunningLimiter, startExpressRateLimit, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * The client against limiters no one here wrote, each started as the real component in front of
 * the reference server (its own limiter off, so theirs is the only one), for what only the real ones
 * show: nginx `limit_req`'s bare 429s over real sockets make the client cut its rate, and
 * express-rate-limit's IETF draft-8 fields are read as the real library writes them. nginx runs at
 * twice the acceptance's real rate (120r/m: 500 ms between requests). Each run is as short as what
 * it proves: nginx in raw mode at 3x its rate for 10 s (20 admitted, 40 refused or so), and
 * express-rate-limit for 2 of its windows (a window is the unit its headers speak of, and the second
 * shows the client reading the reset of the first). The paced runs at length are
 * test/client/third-party-models.test.ts, against models of both in simulated time. The two go side
 * by side, each with its own limiter.
 */

const TIME_SCALE = 2;
/** The Free plan's minute, as the limiter in front counts it: 60 per 30 s, 2 a second. */
const FREE: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 / TIME_SCALE }];
/** nginx's 120r/m. */
const NGINX_PER_S = 2;
const RAW_S = 10;
/** express-rate-limit's real limit, and its window; the client is told twice as much. */
const EXPRESS_LIMIT = 30;
const EXPRESS_WINDOW_S = 6;
const EXPRESS_WINDOWS = 2;

let upstream: RunningServer;
let raw: RunResult;
let ietf8: RunResult;

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  [raw, ietf8] = await Promise.all([
    runAgainst(await startNginxLimitReq({ upstream: upstream.url, rate: '120r/m' }), {
      workload: { executor: 'constant-arrival-rate', rate: '300%', duration: `${RAW_S}s`, maxInFlight: 8 },
      windows: FREE,
      enforce: false,
    }),
    runAgainst(
      await startExpressRateLimit({
        upstream: upstream.url,
        limit: EXPRESS_LIMIT,
        windowMs: EXPRESS_WINDOW_S * 1000,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
      }),
      {
        workload: { executor: 'constant-vus', vus: 6, duration: `${EXPRESS_WINDOWS * EXPRESS_WINDOW_S}s` },
        windows: [{ name: 'window', limit: 2 * EXPRESS_LIMIT, seconds: EXPRESS_WINDOW_S }],
        enforce: true,
      },
    ),
  ]);
}, 60_000);

afterAll(async () => {
  await upstream?.close();
});
/** A run against `limiter`, which is stopped after it. */
async function runAgainst(
  limiter: RunningLimiter,
  o: Omit<Parameters<typeof runListAgainst>[1], 'timeScale'>,
): Promise<RunResult> {
  try {
    return await runListAgainst(limiter.url, { ...o, timeScale: TIME_SCALE });
  } finally {
    await limiter.stop();
  }
}

describe('real nginx limit_req (a GCRA, no burst, no headers)', () => {
  it('in raw mode at 3x its rate: a few 429s, never a storm, nothing sent while a pause holds', () => {
    expectRawThroughBareGcra(raw, { perSecond: NGINX_PER_S, seconds: RAW_S });
  });
});

describe('real express-rate-limit sending only the IETF draft-8 fields', () => {
  it('with a plan told twice the server limit: at most one 429 in 2 windows, 95% of the real limit', () => {
    expectIetf8LimitKept(ietf8, { limit: EXPRESS_LIMIT, windows: EXPRESS_WINDOWS });
  });
});
