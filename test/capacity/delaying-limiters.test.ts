import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { EXCESS_BOUND } from '../../src/capacity/exhaust.ts';
import { SLOW_DOWN_POINTS } from '../../src/capacity/slow-down.ts';
import { formatCapacityTable } from '../../src/capacity/table.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
import { startExpressSlowDown } from '../helpers/limiters.ts';

/**
 * `capacity` against the real express-slow-down, which never refuses but holds each request past
 * `delayAfter` 100 ms longer than the last: its threshold and its step, told from real timing. The
 * sliding windows that count refused requests, and the same probe against a model of
 * express-slow-down, are test/capacity/delaying-model.test.ts, in simulated time.
 */

const SLOW_DOWN = { delayAfter: 5, delayMs: 100 };
const SLOW_DOWN_PLAN: Plan = { name: 'free', windows: [{ name: 'window', limit: 10, seconds: 5 }] };

const probes = new CapacityCases();

beforeAll(async () => {
  const upstream = await probes.started(() => startServer({ rateLimit: false, seedData: 3 }));
  const cases: [string, Promise<ProbeRun>][] = [
    [
      'slow-down',
      probes
        .started(() => startExpressSlowDown({ upstream: upstream.url, ...SLOW_DOWN }))
        .then((l) => probeOne(l.url, SLOW_DOWN_PLAN)),
    ],
  ];
  await probes.settle(cases);
}, 90_000);

afterAll(async () => {
  await probes.stop();
});

const get = (name: string) => probes.get(name);

describe('express-slow-down: delays rather than refuses', () => {
  it('a threshold of 5 and 100 ms more per request (within 10%), found in bounded requests', () => {
    const { report: r, result } = get('slow-down');
    const why = r.limiter.evidence.join('; ');
    expect(r.limiter.slowDown, why).not.toBeNull();
    expect(r.limiter.slowDown?.threshold, why).toBe(SLOW_DOWN.delayAfter);
    const step = r.limiter.slowDown?.delayPerRequestMs as number;
    expect(Math.abs(step - SLOW_DOWN.delayMs) / SLOW_DOWN.delayMs, why).toBeLessThanOrEqual(0.1);
    // It stopped once the growth was measured (a jittery answer may take one more or two), short of
    // the limit + 3 it sends a limiter that refuses.
    expect(r.exhaust.sent).toBeGreaterThanOrEqual(SLOW_DOWN.delayAfter + 3);
    expect(r.exhaust.sent).toBeLessThanOrEqual(SLOW_DOWN.delayAfter + SLOW_DOWN_POINTS + 2);
    expect(r.exhaust.sent).toBeLessThan((SLOW_DOWN_PLAN.windows[0]?.limit ?? 0) + EXCESS_BOUND);
    expect(r.exhaust.first429At).toBeNull();
    expect(why).toMatch(/delays rather than refuses/);
    // The verdict says what the server does instead, not that it admits too much.
    expect(
      r.reasons.some((line) => /delays rather than refuses/.test(line)),
      r.reasons.join('; '),
    ).toBe(true);
    expect(r.reasons.some((line) => /^no 429 within/.test(line))).toBe(false);
    expect(r.reasons.some((line) => /quota was not back/.test(line))).toBe(false);
    expect(r.violations).toBe(0);
    expect(resultProblem(result)).toBeUndefined();
  });

  it('the summary and the HTML capacity table show the delay', () => {
    const { report: r, result } = get('slow-down');
    const step = r.limiter.slowDown?.delayPerRequestMs;
    expect(formatCapacityTable([r])).toContain(`delays +${step} ms/request after 5`);
    expect(renderHtmlReport(result)).toContain(`delays +${step} ms/request after 5`);
  });
});
