import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
import { expectSlowDownFound, expectSlowDownShown } from '../helpers/capacity-verdicts.ts';
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
    expectSlowDownFound(get('slow-down'), { slowDown: SLOW_DOWN, plan: SLOW_DOWN_PLAN });
  });

  it('the summary and the HTML capacity table show the delay', () => {
    expectSlowDownShown(get('slow-down'), SLOW_DOWN.delayAfter);
  });
});
