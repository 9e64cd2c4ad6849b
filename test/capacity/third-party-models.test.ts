import { beforeAll, describe, expect, it } from 'vitest';
import type { LimiterModelName } from '../../src/api/limiter-models.ts';
import type { Plan, PlanTable } from '../../src/api/plans.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import type { CapacityReport } from '../../src/result/capacity-types.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';
import {
  expectBareGcraFound,
  expectIetf8WindowFound,
  expectResultsValid,
  expectSecondsUntilWindowFound,
  refusalBound,
} from '../helpers/capacity-verdicts.ts';
import { expressRateLimit, fastifyRateLimit, limitReq } from '../helpers/simulated-limiters.ts';

/**
 * `capacity` against models of limiters it was not written for (test/helpers/simulated-limiters.ts),
 * in simulated time: nginx `limit_req` (a GCRA that answers a bare 429, no header, no Retry-After),
 * @fastify/rate-limit (a fixed window whose X-RateLimit-Reset counts the seconds until the reset),
 * express-rate-limit speaking IETF draft-8 or nothing at all, and the reference server under each of
 * its `--limiter` models. Each is given the plan that matches its rate, as
 * test/capacity/real-limiters.test.ts gives the real ones, which keep these models honest.
 *
 * nginx's 120r/m is one request per 500 ms; its plan here is 30 per 15 s, the same rate in a quarter
 * of the time.
 */

const NGINX_RATE_PER_S = 2;
const NGINX_PLAN: Plan = { name: 'free', windows: [{ name: 'quarter-minute', limit: 30, seconds: 15 }] };
const FASTIFY = { max: 10, windowMs: 5000 };
const FASTIFY_PLAN: Plan = { name: 'free', windows: [{ name: 'window', limit: 10, seconds: 5 }] };
/** The reference server's plan: 10 a minute, at time scale 10 a window of 6 s (600 ms per request). */
const REFERENCE_SCALE = 10;
const REFERENCE_PLANS: PlanTable = {
  free: { name: 'free', windows: [{ name: 'minute', limit: 10, seconds: 60 }] },
};
const MODELS: [LimiterModelName, CapacityReport['limiter']['type']][] = [
  ['fixed', 'fixed-window'],
  ['sliding', 'sliding-window'],
  ['token-bucket', 'token-bucket'],
  ['gcra', 'gcra'],
];
const UPSTREAM: ServerOptions = { rateLimit: false, seedData: 3 };

const runs = new Map<string, ProbeRun>();
const get = (name: string) => runs.get(name) as ProbeRun;

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  const cases: [string, () => Promise<ProbeRun>][] = [
    [
      'nginx',
      () => probeSimulated(UPSTREAM, NGINX_PLAN, 1, (u) => limitReq(u, { perSecond: NGINX_RATE_PER_S })),
    ],
    [
      'nginx-burst',
      () =>
        probeSimulated(UPSTREAM, NGINX_PLAN, 1, (u) =>
          limitReq(u, { perSecond: NGINX_RATE_PER_S, burst: 5, nodelay: true }),
        ),
    ],
    [
      'fastify',
      () =>
        probeSimulated(UPSTREAM, FASTIFY_PLAN, 1, (u) =>
          fastifyRateLimit(u, { max: FASTIFY.max, timeWindowMs: FASTIFY.windowMs }),
        ),
    ],
    [
      'express-ietf-8',
      () =>
        probeSimulated(UPSTREAM, FASTIFY_PLAN, 1, (u) =>
          expressRateLimit(u, { limit: FASTIFY.max, windowMs: FASTIFY.windowMs, headers: 'draft-8' }),
        ),
    ],
    [
      'express-silent',
      () =>
        probeSimulated(UPSTREAM, FASTIFY_PLAN, 1, (u) =>
          expressRateLimit(u, { limit: FASTIFY.max, windowMs: FASTIFY.windowMs, headers: 'none' }),
        ),
    ],
    ...MODELS.map(([model]): [string, () => Promise<ProbeRun>] => [
      model,
      () =>
        probeSimulated(
          {
            limiter: model,
            timeScale: REFERENCE_SCALE,
            plans: REFERENCE_PLANS,
            keys: { 'free-demo-key': 'free' },
          },
          REFERENCE_PLANS.free as Plan,
          REFERENCE_SCALE,
        ),
    ]),
  ];
  for (const [name, probe] of cases) runs.set(name, await probe());
}, 120_000);

describe('a model of nginx limit_req, a GCRA with no headers at all', () => {
  it.each([
    ['nginx', 0],
    ['nginx-burst', 5],
  ])('%s: a GCRA of burst %i at 2 requests a second (within 2%), found with few 429s', (name, burst) => {
    expectBareGcraFound(get(name as string), {
      burst: burst as number,
      perSecond: NGINX_RATE_PER_S,
      plan: NGINX_PLAN,
    });
  });
});

describe('a model of @fastify/rate-limit, a fixed window telling the seconds until its reset', () => {
  it('a fixed window of 10 per 5 s, its reset read as seconds-until: the quota back within 1.1 s of it', () => {
    expectSecondsUntilWindowFound(get('fastify'), FASTIFY);
  });
});

describe('a model of express-rate-limit speaking the IETF draft-8 fields only', () => {
  it('a fixed window of 10 per 5 s, its reset read from RateLimit t: the quota back within 1.1 s of it', () => {
    expectIetf8WindowFound(get('express-ietf-8'), FASTIFY);
  });
});

describe('a model of express-rate-limit with every header off: a window that says nothing, not even Retry-After', () => {
  it('is found as a window of 10 per 5 s from the answers alone (fixed or sliding cannot be told)', () => {
    const { report: r, result } = get('express-silent');
    expect(r.limiter.headerDialect).toBe('none');
    expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('unknown');
    expect(r.limiter.window).toEqual({ limit: FASTIFY.max, seconds: FASTIFY.windowMs / 1000 });
    expect(r.limiter.burst).toBe(FASTIFY.max);
    expect(r.exhaust.first429At).toBe(FASTIFY.max + 1);
    expect(r.rate.acceptedPerWindow).toEqual([FASTIFY.max, FASTIFY.max]);
    expect(result.overall.rateLimited).toBeLessThanOrEqual(refusalBound(r));
    expect(result.compliance.violations).toBe(0);
  });
});

describe('the reference server under each --limiter model', () => {
  it.each(MODELS)('--limiter %s is reported as %s', (model, type) => {
    const { report: r, result } = get(model);
    expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe(type);
    expect(r.limiter.headerDialect).toBe('seed');
    expect(r.limiter.resetSemantics).toBe('unix-seconds');
    expect(r.rate.acceptedPerWindow).toEqual([10, 10]);
    expect(r.violations).toBe(0);
    expect(result.compliance.violations).toBe(0);
    expect(result.overall.rateLimited).toBeLessThanOrEqual(refusalBound(r));
  });
});

describe('the result and the report', () => {
  it('every result is valid, and the HTML table shows model, rate, burst and dialect', () => {
    expectResultsValid(runs.entries());
    const html = renderHtmlReport(get('nginx').result);
    expect(html).toMatch(/gcra/);
    expect(html).toMatch(/sustained/);
  });
});
