import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
import {
  expectConcurrencyAndQueueShown,
  expectConcurrencyLimitFound,
  expectQueueFound,
  expectResultsValid,
} from '../helpers/capacity-verdicts.ts';
import { startNginxLimitConn, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * `capacity` against the real nginx, for the limits a rate probe cannot see one request at a time:
 * `limit_conn` (a 429 for a third request of the key in flight, whatever the rate) over an upstream
 * that answers in 300 ms, and `limit_req` with a burst and no `nodelay`, which holds the excess and
 * releases it at the rate rather than refusing it, both told from real sockets and real timing. The
 * two run side by side. A plan rate the latency cannot keep, a fixed window behind limit_conn and a
 * slow fixed window are test/capacity/concurrency-model.test.ts, with these two again, against
 * models of nginx in simulated time.
 *
 * limit_conn's plan is 10 per 5 s: at 300 ms an answer, one request in flight keeps 10 in 3 s, so
 * the paced windows are kept. limit_req's plan is its own rate, 2 a second. Windows of 5 s rather
 * than 10 (the model file's) halve the paced phase, the longest; the ramp, the burst and the rate
 * search that tell the limits probe at the plan's interval, which is the same.
 */

const UPSTREAM_LATENCY_MS = 300;
const CONN = 2;
const CONN_PLAN: Plan = { name: 'free', windows: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };
const QUEUE_RATE_PER_S = 2;
const QUEUE = 5;
const QUEUE_PLAN: Plan = { name: 'free', windows: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };

const probes = new CapacityCases();
let fileStarted = 0;

beforeAll(async () => {
  fileStarted = Date.now();
  const slow = await probes.started(() =>
    startServer({ rateLimit: false, seedData: 3, faults: { latencyMs: UPSTREAM_LATENCY_MS } }),
  );
  const quick = await probes.started(() => startServer({ rateLimit: false, seedData: 3 }));
  const cases: [string, Promise<ProbeRun>][] = [
    [
      'limit_conn',
      probes
        .started(() => startNginxLimitConn({ upstream: slow.url, conn: CONN }))
        .then((l) => probeOne(l.url, CONN_PLAN)),
    ],
    [
      'queue',
      probes
        .started(() =>
          startNginxLimitReq({
            upstream: quick.url,
            rate: `${QUEUE_RATE_PER_S}r/s`,
            burst: QUEUE,
            zoneKey: '$http_authorization',
          }),
        )
        .then((l) => probeOne(l.url, QUEUE_PLAN)),
    ],
  ];
  await probes.settle(cases);
}, 90_000);

afterAll(async () => {
  await probes.stop();
});

const get = (name: string) => probes.get(name);

describe('nginx limit_conn 2 per key over a 300 ms upstream', () => {
  it('is a concurrency limit of 2 in flight, found in under 90 s and within 25% of the time announced', () => {
    expectConcurrencyLimitFound(get('limit_conn'), { conn: CONN, plan: CONN_PLAN });
  });
});

describe('nginx limit_req 2r/s burst=5 without nodelay: a limiter that queues', () => {
  it('holds 5 and releases them at 2 a second (within 2%)', () => {
    const { limiter } = get('queue').report;
    console.log(`nginx queue: ${limiter.queue} held, released at ${limiter.sustainedPerSecond}/s`);
    expectQueueFound(get('queue'), { queue: QUEUE, perSecond: QUEUE_RATE_PER_S, plan: QUEUE_PLAN });
  });
});

describe('the threshold, the summary and the report', () => {
  it('capacity.free.max_in_flight reads the concurrency limit; the table and the HTML show it and the queue', () => {
    expectConcurrencyAndQueueShown(get('limit_conn'), get('queue'), { conn: CONN, queue: QUEUE });
  });
});

describe('the results', () => {
  it('are valid, and the file took less than 90 s', () => {
    expectResultsValid(probes.entries());
    expect(Date.now() - fileStarted).toBeLessThan(90_000);
  });
});
