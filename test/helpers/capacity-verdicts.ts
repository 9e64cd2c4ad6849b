import { expect } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { SLOW_DOWN_POINTS } from '../../src/capacity/discover/slow-down.ts';
import { SEARCH_MAX_PROBES, SEARCH_MAX_REFUSED } from '../../src/capacity/measure/rate-search.ts';
import { EXCESS_BOUND } from '../../src/capacity/model.ts';
import { formatCapacityTable } from '../../src/capacity/report/table.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { evaluateThreshold } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import type { CapacityReport } from '../../src/result/capacity-types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import type { ProbeRun } from './capacity-cases.ts';

/**
 * What `capacity` must find of a third-party limiter, judged alike whether the probe met the real
 * component (test/capacity/*-limiters.test.ts, real-limiters.test.ts) or its model in simulated time
 * (test/capacity/*-model.test.ts, third-party-models.test.ts). What differs between the two, the
 * plan above all (the real runs take shorter windows), is passed in.
 */

/** The probe's evidence, reasons and log, for a failed assertion's message. */
export const probeWhy = ({ report: r, log }: ProbeRun) =>
  `${r.limiter.evidence.join('; ')} | ${r.reasons.join('; ')} | ${log.join(' / ')}`;

/** "about 26 s in all": every estimate the probe announced, in ms. */
export const announcedEstimates = (log: string[]) =>
  log.flatMap((line) => [...line.matchAll(/about (\d+) s in all/g)].map((m) => Number(m[1]) * 1000));

/** The plan's first window's limit: what every paced window must have accepted. */
const limitOf = (plan: Plan) => plan.windows[0]?.limit;

/** 429s the whole probe met: the burst's, the search's (bounded) and at most one per paced window. */
export const refusalBound = (r: CapacityReport) => 1 + SEARCH_MAX_REFUSED + r.rate.windows;

/**
 * nginx `limit_conn` of `conn` per key over an upstream answering in 300 ms, probed with a `plan`
 * one request in flight can keep: a concurrency limit of `conn`, found in under 90 s and within 25%
 * of the time announced, every paced window kept.
 */
export function expectConcurrencyLimitFound(run: ProbeRun, o: { conn: number; plan: Plan }): void {
  const { report: r, result, log } = run;
  const why = probeWhy(run);
  expect(r.limiter.type, why).toBe('concurrency');
  expect(r.limiter.maxInFlight, why).toBe(o.conn);
  expect(r.durationMs).toBeLessThan(90_000);
  const announced = announcedEstimates(log).at(-1) as number;
  expect(announced, why).toBeGreaterThan(0);
  expect(
    Math.abs(announced - r.durationMs) / r.durationMs,
    `announced ${announced} ms, took ${r.durationMs} ms`,
  ).toBeLessThanOrEqual(0.25);
  // Once the limit is known, nothing more is refused for it: the ramp's burst of 4 is all.
  expect(result.overall.rateLimited).toBeLessThanOrEqual(o.conn);
  // 300 ms an answer, 2 in flight: the plan's limit in each window is kept (20 in 10 s, 10 in 5 s).
  expect(r.rate.acceptedPerWindow).toEqual([limitOf(o.plan), limitOf(o.plan)]);
  expect(r.reasons.join('; ')).not.toMatch(/fell behind/);
  expect(r.violations).toBe(0);
}

/**
 * nginx `limit_req` at `perSecond` with a burst of `queue` and no `nodelay`, probed with a plan at its
 * own rate: a GCRA that holds `queue` and releases them at its rate (within 2%).
 */
export function expectQueueFound(run: ProbeRun, o: { queue: number; perSecond: number; plan: Plan }): void {
  const { report: r, result } = run;
  const why = probeWhy(run);
  expect(r.limiter.queue, why).toBe(o.queue);
  expect(r.limiter.type, why).toBe('gcra');
  // Held answers are not requests in flight.
  expect(r.limiter.maxInFlight ?? null, why).toBeNull();
  const sustained = r.limiter.sustainedPerSecond as number;
  expect(Math.abs(sustained - o.perSecond) / o.perSecond, why).toBeLessThanOrEqual(0.02);
  expect(r.rate.acceptedPerWindow).toEqual([limitOf(o.plan), limitOf(o.plan)]);
  expect(result.overall.rateLimited).toBeLessThanOrEqual(3);
  expect(r.violations).toBe(0);
}

/**
 * The runs of `expectConcurrencyLimitFound` and `expectQueueFound` in the threshold, the table and
 * the HTML: capacity.free.max_in_flight reads the concurrency limit, and the queue is shown.
 */
export function expectConcurrencyAndQueueShown(
  conn: ProbeRun,
  queue: ProbeRun,
  o: { conn: number; queue: number },
): void {
  const threshold = (text: string, run: ProbeRun) =>
    evaluateThreshold(parseThreshold(text, 'cli', new Set()), run.result);
  expect(threshold(`capacity.free.max_in_flight==${o.conn}`, conn).passed).toBe(true);
  expect(threshold(`capacity.free.max_in_flight>=${o.conn + 1}`, conn).passed).toBe(false);
  // No concurrency limit seen: the figure was not measured, which fails the threshold.
  expect(threshold('capacity.free.max_in_flight>=1', queue).passed).toBe(false);
  expect(formatCapacityTable([conn.report])).toContain(`concurrency, ≤${o.conn} in flight`);
  expect(formatCapacityTable([queue.report])).toContain(`gcra, queue ${o.queue}`);
  expect(renderHtmlReport(conn.result)).toContain(`≤${o.conn} in flight`);
  expect(renderHtmlReport(queue.result)).toContain(`queue ${o.queue}`);
}

/**
 * express-slow-down, which never refuses but holds each request past `delayAfter` `delayMs` longer
 * than the last, probed with `plan`: its threshold and its step (within 10%), found in bounded
 * requests, and a verdict that says it delays.
 */
export function expectSlowDownFound(
  run: ProbeRun,
  o: { slowDown: { delayAfter: number; delayMs: number }; plan: Plan },
): void {
  const { report: r, result } = run;
  const { delayAfter, delayMs } = o.slowDown;
  const why = r.limiter.evidence.join('; ');
  expect(r.limiter.slowDown, why).not.toBeNull();
  expect(r.limiter.slowDown?.threshold, why).toBe(delayAfter);
  const step = r.limiter.slowDown?.delayPerRequestMs as number;
  expect(Math.abs(step - delayMs) / delayMs, why).toBeLessThanOrEqual(0.1);
  // It stopped once the growth was measured (a jittery answer may take one more or two), short of
  // the limit + 3 it sends a limiter that refuses.
  expect(r.exhaust.sent).toBeGreaterThanOrEqual(delayAfter + 3);
  expect(r.exhaust.sent).toBeLessThanOrEqual(delayAfter + SLOW_DOWN_POINTS + 2);
  expect(r.exhaust.sent).toBeLessThan((limitOf(o.plan) ?? 0) + EXCESS_BOUND);
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
}

/** The run of `expectSlowDownFound` in the capacity table and the HTML: the step it measured. */
export function expectSlowDownShown(run: ProbeRun, delayAfter: number): void {
  const { report: r, result } = run;
  const step = r.limiter.slowDown?.delayPerRequestMs;
  expect(formatCapacityTable([r])).toContain(`delays +${step} ms/request after ${delayAfter}`);
  expect(renderHtmlReport(result)).toContain(`delays +${step} ms/request after ${delayAfter}`);
}

/**
 * nginx `limit_req` at `perSecond` with a burst of `burst` (nodelay) and no header at all, probed
 * with a `plan` at its rate: a GCRA of that burst and rate (within 2%), found with few 429s, every
 * paced request admitted, and the missing Retry-After the only fault.
 */
export function expectBareGcraFound(
  run: ProbeRun,
  o: { burst: number; perSecond: number; plan: Plan },
): void {
  const { report: r, result } = run;
  expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('gcra');
  expect(r.limiter.headerDialect).toBe('none');
  expect(r.limiter.resetSemantics).toBe('none');
  expect(r.limiter.burst).toBe(o.burst);
  // Back to back, one at a time, each after the upstream's answer: on a busy machine the burst may
  // last long enough for the bucket to refill once, which the burst figure accounts for.
  expect(r.exhaust.first429At).toBeGreaterThanOrEqual(o.burst + 2);
  expect(r.exhaust.first429At).toBeLessThanOrEqual(o.burst + 3);
  const sustained = r.limiter.sustainedPerSecond as number;
  expect(Math.abs(sustained - o.perSecond) / o.perSecond).toBeLessThanOrEqual(0.02);
  const search = r.limiter.rateSearch;
  expect(search?.probes).toBeLessThanOrEqual(SEARCH_MAX_PROBES);
  expect(search?.refused).toBeLessThanOrEqual(SEARCH_MAX_REFUSED);
  expect(result.overall.rateLimited).toBeLessThanOrEqual(refusalBound(r));
  // Paced at the plan's spacing (a GCRA's rule binds between two sends), every request is admitted.
  expect(r.rate.acceptedPerWindow).toEqual([limitOf(o.plan), limitOf(o.plan)]);
  expect(r.violations).toBe(0);
  expect(result.compliance.violations).toBe(0);
  // What fails is the contract, not the rate: a bare 429 carries no Retry-After.
  expect(r.reasons).toContain('the 429 carried no Retry-After');
}

/**
 * @fastify/rate-limit, `max` per `windowMs` in a fixed window whose X-RateLimit-Reset counts the
 * seconds until its reset, probed with the plan of its rate: the window and its reset read right.
 */
export function expectSecondsUntilWindowFound(run: ProbeRun, o: { max: number; windowMs: number }): void {
  const { report: r, result } = run;
  expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('fixed-window');
  expect(r.limiter.headerDialect).toBe('seconds-until');
  expect(r.limiter.resetSemantics).toBe('seconds-until');
  expect(r.limiter.window).toEqual({ limit: o.max, seconds: o.windowMs / 1000 });
  expect(r.limiter.burst).toBe(o.max);
  expect(r.limiter.sustainedPerSecond).toBeCloseTo(o.max / (o.windowMs / 1000), 6);
  expect(r.exhaust.first429At).toBe(o.max + 1);
  expect(r.exhaust.sent).toBeLessThanOrEqual(o.max + EXCESS_BOUND);
  // Whole seconds until the reset, rounded up: the quota is back at most a second before it says.
  expect(Math.abs(r.recovery.resetErrorMs as number)).toBeLessThanOrEqual(1100);
  expect(r.rate.acceptedPerWindow).toEqual([o.max, o.max]);
  expect(r.verdict, r.reasons.join('; ')).toBe('pass');
  expect(result.compliance.violations).toBe(0);
}

/**
 * express-rate-limit, `max` per `windowMs` speaking the IETF draft-8 fields only, probed with the
 * plan of its rate: a fixed window, its reset read from RateLimit's t.
 */
export function expectIetf8WindowFound(run: ProbeRun, o: { max: number; windowMs: number }): void {
  const { report: r } = run;
  expect(r.limiter.type, r.limiter.evidence.join('; ')).toBe('fixed-window');
  expect(r.limiter.headerDialect).toBe('ietf-8');
  expect(r.limiter.resetSemantics).toBe('seconds-until');
  expect(r.limiter.window).toEqual({ limit: o.max, seconds: o.windowMs / 1000 });
  // Whole seconds until the reset, rounded up: the quota is back at most a second before it says.
  expect(Math.abs(r.recovery.resetErrorMs as number)).toBeLessThanOrEqual(1100);
  expect(r.verdict, r.reasons.join('; ')).toBe('pass');
}

/** Every run's result valid as written to disk. */
export function expectResultsValid(runs: Iterable<[string, ProbeRun]>): void {
  for (const [name, { result }] of runs)
    expect(resultProblem(JSON.parse(JSON.stringify(result))), name).toBeUndefined();
}
