import { beforeAll, describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import {
  expectIetf8LimitKept,
  expectRawThroughBareGcra,
  rateFigures as summary,
} from '../helpers/limiter-verdicts.ts';
import { inSimulatedTime, simulatedServer } from '../helpers/simulated.ts';
import { expressRateLimit, limitReq } from '../helpers/simulated-limiters.ts';

/**
 * The client against models of limiters no one here wrote (test/helpers/simulated-limiters.ts), in
 * front of the reference server with its own limiter off, in simulated time: nginx `limit_req`, a
 * GCRA that says nothing but a bare 429, and express-rate-limit speaking only the IETF draft-8
 * fields. nginx runs at twice the acceptance's real rate (120r/m for 60r/m: 500 ms between requests,
 * of which the client's margin is 15 ms), as its end-to-end test does. That the real ones answer as
 * their models do is test/client/real-limiters.test.ts.
 */

const TIME_SCALE = 2;
/** The Free plan's minute, as the limiter in front counts it: 60 per 30 s, 2 a second. */
const FREE: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 / TIME_SCALE }];
const NGINX_PER_S = 2;
const PACED_S = 60;
const RAW_S = 30;
/** express-rate-limit's real limit, and its window; the client is told twice as much. */
const EXPRESS_LIMIT = 30;
const EXPRESS_WINDOW_S = 6;
const EXPRESS_WINDOWS = 5;

let paced: RunResult;
let raw: RunResult;
let ietf8: RunResult;

async function runThrough(
  limiter: (upstream: Transport) => Transport,
  o: Omit<Parameters<typeof runListAgainst>[1], 'timeScale' | 'transport'>,
): Promise<RunResult> {
  const upstream = await simulatedServer({ rateLimit: false, seedData: 3 });
  try {
    return await inSimulatedTime(() =>
      runListAgainst(upstream.url, { ...o, transport: limiter(upstream.transport), timeScale: TIME_SCALE }),
    );
  } finally {
    await upstream.close();
  }
}

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  paced = await runThrough((u) => limitReq(u, { perSecond: NGINX_PER_S }), {
    workload: { executor: 'constant-vus', vus: 4, duration: `${PACED_S}s` },
    windows: FREE,
    enforce: true,
  });
  raw = await runThrough((u) => limitReq(u, { perSecond: NGINX_PER_S }), {
    workload: { executor: 'constant-arrival-rate', rate: '300%', duration: `${RAW_S}s`, maxInFlight: 8 },
    windows: FREE,
    enforce: false,
  });
  ietf8 = await runThrough(
    (u) =>
      expressRateLimit(u, { limit: EXPRESS_LIMIT, windowMs: EXPRESS_WINDOW_S * 1000, headers: 'draft-8' }),
    {
      workload: { executor: 'constant-vus', vus: 6, duration: `${EXPRESS_WINDOWS * EXPRESS_WINDOW_S}s` },
      windows: [{ name: 'window', limit: 2 * EXPRESS_LIMIT, seconds: EXPRESS_WINDOW_S }],
      enforce: true,
    },
  );
}, 120_000);

describe('a model of nginx limit_req (a GCRA, no burst, no headers)', () => {
  it('paced at the plan rate: at most one 429, 95% of the quota, no violation', () => {
    expect(paced.overall.rateLimited, summary(paced)).toBeLessThanOrEqual(1);
    expect(paced.compliance.violations, summary(paced)).toBe(0);
    expect(paced.compliance.quotaUtilization, summary(paced)).toBeGreaterThanOrEqual(0.95);
  });

  it('the result says what the client learned: a GCRA, and the gap it kept', () => {
    const limiter = paced.compliance.limiter;
    // Learned from a 429 at the plan's spacing, or none came and nothing had to be learned.
    if (paced.overall.rateLimited > 0) {
      expect(limiter?.model).toBe('gcra');
      expect(limiter?.given).toBe(false);
      // 500 ms between requests at 120r/m, and a margin of 2% and 5 ms.
      expect(limiter?.gapMs).toBeGreaterThanOrEqual(500);
      expect(limiter?.gapMs).toBeLessThan(560);
    } else expect(limiter).toBeUndefined();
    expect(resultProblem(paced)).toBeUndefined();
  });

  it('in raw mode at 3x its rate: a few 429s, never a storm, nothing sent while a pause holds', () => {
    expectRawThroughBareGcra(raw, { perSecond: NGINX_PER_S, seconds: RAW_S });
  });
});

describe('a model of express-rate-limit sending only the IETF draft-8 fields', () => {
  it('with a plan told twice the server limit: at most one 429 in 5 windows, 95% of the real limit', () => {
    expectIetf8LimitKept(ietf8, { limit: EXPRESS_LIMIT, windows: EXPRESS_WINDOWS });
  });
});
