import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
import {
  expectBareGcraFound,
  expectIetf8WindowFound,
  expectResultsValid,
  expectSecondsUntilWindowFound,
} from '../helpers/capacity-verdicts.ts';
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

describe('nginx limit_req, a GCRA with no headers at all', () => {
  it('a GCRA of burst 0 at 2 requests a second (within 2%), found with few 429s', () => {
    expectBareGcraFound(get('nginx'), { burst: 0, perSecond: NGINX_RATE_PER_S, plan: NGINX_PLAN });
  });
});

describe('@fastify/rate-limit, a fixed window telling the seconds until its reset', () => {
  it('a fixed window of 10 per 5 s, its reset read as seconds-until: the quota back within 1.1 s of it', () => {
    expectSecondsUntilWindowFound(get('fastify'), FASTIFY);
  });
});

describe('express-rate-limit speaking the IETF draft-8 fields only', () => {
  it('a fixed window of 10 per 5 s, its reset read from RateLimit t: the quota back within 1.1 s of it', () => {
    expectIetf8WindowFound(get('express-ietf-8'), FASTIFY);
  });
});

describe('the result and the report', () => {
  it('every result is valid, and the HTML table shows model, rate, burst and dialect', () => {
    expectResultsValid(probes.entries());
    const html = renderHtmlReport(get('nginx').result);
    expect(html).toMatch(/gcra/);
    expect(html).toMatch(/sustained/);
  });

  it('all of it within a minute and a half', () => {
    expect(Date.now() - fileStarted).toBeLessThan(90_000);
  });
});
