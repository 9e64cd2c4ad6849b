import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { formatCapacityTable } from '../../src/capacity/table.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { evaluateThreshold } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { startServer } from '../../src/server/index.ts';
import { CapacityCases, type ProbeRun, probeOne } from '../helpers/capacity-cases.ts';
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
const limitOf = (plan: Plan) => plan.windows[0]?.limit;

const probes = new CapacityCases();
let fileStarted = 0;

/** "about 26 s in all": every estimate the probe announced, in ms. */
const estimates = (log: string[]) =>
  log.flatMap((line) => [...line.matchAll(/about (\d+) s in all/g)].map((m) => Number(m[1]) * 1000));

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
    const { report: r, result, log } = get('limit_conn');
    const why = `${r.limiter.evidence.join('; ')} | ${r.reasons.join('; ')} | ${log.join(' / ')}`;
    expect(r.limiter.type, why).toBe('concurrency');
    expect(r.limiter.maxInFlight, why).toBe(CONN);
    expect(r.durationMs).toBeLessThan(90_000);
    const announced = estimates(log).at(-1) as number;
    expect(announced, why).toBeGreaterThan(0);
    expect(
      Math.abs(announced - r.durationMs) / r.durationMs,
      `announced ${announced} ms, took ${r.durationMs} ms`,
    ).toBeLessThanOrEqual(0.25);
    // Once the limit is known, nothing more is refused for it: the ramp's burst of 4 is all.
    expect(result.overall.rateLimited).toBeLessThanOrEqual(CONN);
    // 300 ms an answer, 2 in flight: the plan's 10 in 5 s are kept.
    expect(r.rate.acceptedPerWindow).toEqual([limitOf(CONN_PLAN), limitOf(CONN_PLAN)]);
    expect(r.reasons.join('; ')).not.toMatch(/fell behind/);
    expect(r.violations).toBe(0);
  });
});

describe('nginx limit_req 2r/s burst=5 without nodelay: a limiter that queues', () => {
  it('holds 5 and releases them at 2 a second (within 2%)', () => {
    const { report: r, result, log } = get('queue');
    const why = `${r.limiter.evidence.join('; ')} | ${r.reasons.join('; ')} | ${log.join(' / ')}`;
    expect(r.limiter.queue, why).toBe(QUEUE);
    expect(r.limiter.type, why).toBe('gcra');
    // Held answers are not requests in flight.
    expect(r.limiter.maxInFlight ?? null, why).toBeNull();
    const sustained = r.limiter.sustainedPerSecond as number;
    expect(Math.abs(sustained - QUEUE_RATE_PER_S) / QUEUE_RATE_PER_S, why).toBeLessThanOrEqual(0.02);
    expect(r.rate.acceptedPerWindow).toEqual([limitOf(QUEUE_PLAN), limitOf(QUEUE_PLAN)]);
    expect(result.overall.rateLimited).toBeLessThanOrEqual(3);
    expect(r.violations).toBe(0);
  });
});

describe('the threshold, the summary and the report', () => {
  it('capacity.free.max_in_flight reads the concurrency limit; the table and the HTML show it and the queue', () => {
    const conn = get('limit_conn');
    const queue = get('queue');
    const threshold = (text: string, run: ProbeRun) =>
      evaluateThreshold(parseThreshold(text, 'cli', new Set()), run.result);
    expect(threshold('capacity.free.max_in_flight==2', conn).passed).toBe(true);
    expect(threshold('capacity.free.max_in_flight>=3', conn).passed).toBe(false);
    // No concurrency limit seen: the figure was not measured, which fails the threshold.
    expect(threshold('capacity.free.max_in_flight>=1', queue).passed).toBe(false);
    expect(formatCapacityTable([conn.report])).toMatch(/concurrency, ≤2 in flight/);
    expect(formatCapacityTable([queue.report])).toMatch(/gcra, queue 5/);
    expect(renderHtmlReport(conn.result)).toMatch(/≤2 in flight/);
    expect(renderHtmlReport(queue.result)).toMatch(/queue 5/);
  });
});

describe('the results', () => {
  it('are valid, and the file took less than 90 s', () => {
    for (const [name, { result }] of probes.entries())
      expect(resultProblem(JSON.parse(JSON.stringify(result))), name).toBeUndefined();
    expect(Date.now() - fileStarted).toBeLessThan(90_000);
  });
});
