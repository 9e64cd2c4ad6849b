import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { EXCESS_BOUND } from '../../src/capacity/exhaust.ts';
import { SEARCH_MAX_PROBES, SEARCH_MAX_REFUSED } from '../../src/capacity/rate-search.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import type { CapacityReport } from '../../src/result/capacity-types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
import { startExpressRateLimit, startFastifyRateLimit, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * `capacity` against the real limiters it was not written for, for what only the real ones show:
 * nginx `limit_req` (a GCRA that answers a bare 429, no header, no Retry-After) found as a GCRA from
 * its real timing, and the headers of @fastify/rate-limit (X-RateLimit-Reset counting the seconds
 * until the reset) and of express-rate-limit (IETF draft-8) read as the real libraries write them.
 * Each is given the plan that matches its rate, and each runs on its own limiter, side by side, as
 * `capacity` runs its plans. nginx with a burst, express-rate-limit with no header and the
 * reference server's four models are test/capacity/third-party-models.test.ts, against models in
 * simulated time.
 *
 * nginx's 120r/m is one request per 500 ms; its plan here is 10 per 5 s, the same rate in a twelfth
 * of the time, so that its two paced windows take no longer than the libraries' (10 per 5 s).
 */

const NGINX_RATE_PER_S = 2;
const NGINX_PLAN: Plan = { name: 'free', windows: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };
const FASTIFY = { max: 10, windowMs: 5000 };
const FASTIFY_PLAN: Plan = { name: 'free', windows: [{ name: 'window', limit: 10, seconds: 5 }] };

let upstream: RunningServer;
const probes = new CapacityCases();
let fileStarted = 0;

beforeAll(async () => {
  fileStarted = Date.now();
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  const cases: [string, Promise<ProbeRun>][] = [
    [
      'nginx',
      probes
        .started(() => startNginxLimitReq({ upstream: upstream.url, rate: '120r/m' }))
        .then((l) => probeOne(l.url, NGINX_PLAN, 1)),
    ],
    [
      'fastify',
      probes
        .started(() =>
          startFastifyRateLimit({ upstream: upstream.url, max: FASTIFY.max, timeWindowMs: FASTIFY.windowMs }),
        )
        .then((l) => probeOne(l.url, FASTIFY_PLAN, 1)),
    ],
    [
      'express-ietf-8',
      probes
        .started(() =>
          startExpressRateLimit({
            upstream: upstream.url,
            limit: FASTIFY.max,
            windowMs: FASTIFY.windowMs,
            standardHeaders: 'draft-8',
            legacyHeaders: false,
          }),
        )
        .then((l) => probeOne(l.url, FASTIFY_PLAN, 1)),
    ],
  ];
  await probes.settle(cases);
}, 120_000);

afterAll(async () => {
  await probes.stop();
  await upstream?.close();
});

const get = (name: string) => probes.get(name);

/** 429s the whole probe met: the burst's, the search's (bounded) and at most one per paced window. */
const refusalBound = (r: CapacityReport) => 1 + SEARCH_MAX_REFUSED + r.rate.windows;

describe('nginx limit_req, a GCRA with no headers at all', () => {
  it('a GCRA of burst 0 at 2 requests a second (within 2%), found with few 429s', () => {
    const burst = 0;
    const { report: r, result } = get('nginx');
    expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('gcra');
    expect(r.limiter.headerDialect).toBe('none');
    expect(r.limiter.resetSemantics).toBe('none');
    expect(r.limiter.burst).toBe(burst);
    // Back to back, one at a time, each after the upstream's answer: on a busy machine the burst may
    // last long enough for the bucket to refill once, which the burst figure accounts for.
    expect(r.exhaust.first429At).toBeGreaterThanOrEqual(burst + 2);
    expect(r.exhaust.first429At).toBeLessThanOrEqual(burst + 3);
    const sustained = r.limiter.sustainedPerSecond as number;
    expect(Math.abs(sustained - NGINX_RATE_PER_S) / NGINX_RATE_PER_S).toBeLessThanOrEqual(0.02);
    const search = r.limiter.rateSearch;
    expect(search?.probes).toBeLessThanOrEqual(SEARCH_MAX_PROBES);
    expect(search?.refused).toBeLessThanOrEqual(SEARCH_MAX_REFUSED);
    expect(result.overall.rateLimited).toBeLessThanOrEqual(refusalBound(r));
    // Paced at the plan's spacing (a GCRA's rule binds between two sends), every request is admitted.
    const limit = NGINX_PLAN.windows[0]?.limit;
    expect(r.rate.acceptedPerWindow).toEqual([limit, limit]);
    expect(r.violations).toBe(0);
    expect(result.compliance.violations).toBe(0);
    // What fails is the contract, not the rate: a bare 429 carries no Retry-After.
    expect(r.reasons).toContain('the 429 carried no Retry-After');
  });
});

describe('@fastify/rate-limit, a fixed window telling the seconds until its reset', () => {
  it('a fixed window of 10 per 5 s, its reset read as seconds-until: the quota back within 1.1 s of it', () => {
    const { report: r, result } = get('fastify');
    expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('fixed-window');
    expect(r.limiter.headerDialect).toBe('seconds-until');
    expect(r.limiter.resetSemantics).toBe('seconds-until');
    expect(r.limiter.window).toEqual({ limit: FASTIFY.max, seconds: FASTIFY.windowMs / 1000 });
    expect(r.limiter.burst).toBe(FASTIFY.max);
    expect(r.limiter.sustainedPerSecond).toBeCloseTo(FASTIFY.max / (FASTIFY.windowMs / 1000), 6);
    expect(r.exhaust.first429At).toBe(FASTIFY.max + 1);
    expect(r.exhaust.sent).toBeLessThanOrEqual(FASTIFY.max + EXCESS_BOUND);
    // Whole seconds until the reset, rounded up: the quota is back at most a second before it says.
    expect(Math.abs(r.recovery.resetErrorMs as number)).toBeLessThanOrEqual(1100);
    expect(r.rate.acceptedPerWindow).toEqual([FASTIFY.max, FASTIFY.max]);
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
    expect(result.compliance.violations).toBe(0);
  });
});

describe('express-rate-limit speaking the IETF draft-8 fields only', () => {
  it('a fixed window of 10 per 5 s, its reset read from RateLimit t: the quota back within 1.1 s of it', () => {
    const { report: r } = get('express-ietf-8');
    expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('fixed-window');
    expect(r.limiter.headerDialect).toBe('ietf-8');
    expect(r.limiter.resetSemantics).toBe('seconds-until');
    expect(r.limiter.window).toEqual({ limit: FASTIFY.max, seconds: FASTIFY.windowMs / 1000 });
    expect(Math.abs(r.recovery.resetErrorMs as number)).toBeLessThanOrEqual(1100);
    expect(r.verdict, r.reasons.join('; ')).toBe('pass');
  });
});

describe('the result and the report', () => {
  it('every result is valid, and the HTML table shows model, rate, burst and dialect', () => {
    for (const [name, { result }] of probes.entries()) {
      expect(resultProblem(JSON.parse(JSON.stringify(result))), name).toBeUndefined();
    }
    const html = renderHtmlReport(get('nginx').result);
    expect(html).toMatch(/gcra/);
    expect(html).toMatch(/sustained/);
  });

  it('all of it within a minute and a half', () => {
    expect(Date.now() - fileStarted).toBeLessThan(90_000);
  });
});
