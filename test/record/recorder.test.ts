import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/api/operations.ts';
import { latencyStats } from '../../src/record/histogram.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operation, T0 } from '../helpers/unit-attempt.ts';

let listPets: Operation;
let createPet: Operation;
let getPetById: Operation;

/** One recorder fed with `feed`, for the tests that only read it. */
let fed: Recorder;

beforeAll(async () => {
  listPets = await operation('listPets');
  createPet = await operation('createPet');
  getPetById = await operation('getPetById');
  fed = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
  feed(fed);
});

const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

/** The first window of `feed` resets a second after T0 (its 429 says Retry-After 1). */
const firstWindow = { 'x-ratelimit-reset': String(T0 / 1000 + 1) };

/** A small run: setup, a workload with a 429, a retry, a reset and a broken response, then teardown. */
function feed(recorder: Recorder): void {
  // Setup (not measured).
  recorder.record(
    makeAttempt(listPets, {
      sentAt: T0,
      receivedAt: T0 + 10,
      json: [pet],
      headers: { ...okHeaders(T0 + 10), ...firstWindow },
    }),
  );
  recorder.measure(true);
  // The last request of its window (Remaining 0), so that the 429 after it is consistent.
  recorder.record(
    makeAttempt(listPets, {
      sentAt: T0 + 100,
      receivedAt: T0 + 120,
      json: [],
      headers: { ...okHeaders(T0 + 120), ...firstWindow, 'x-ratelimit-remaining': '0' },
    }),
  );
  recorder.record(
    makeAttempt(listPets, {
      sentAt: T0 + 200,
      receivedAt: T0 + 210,
      status: 429,
      json: errorBody(429, 'rate_limited'),
      headers: { ...okHeaders(T0 + 210), ...firstWindow, 'x-ratelimit-remaining': '0', 'retry-after': '1' },
      retried: true,
    }),
  );
  recorder.record(
    makeAttempt(createPet, {
      sentAt: T0 + 1300,
      receivedAt: T0 + 1340,
      status: 201,
      json: pet,
      pacingWaitMs: 30,
      backoffWaitMs: 20,
      scheduledAt: T0 + 1200,
    }),
  );
  // A reset: no status, no headers, retried.
  recorder.record(
    makeAttempt(listPets, {
      sentAt: T0 + 1400,
      receivedAt: T0 + 1405,
      status: 0,
      errorCode: 'ECONNRESET',
      headers: undefined,
      retried: true,
    }),
  );
  // A 500 without rate-limit headers: admitted by the limiter, but it fails a check.
  recorder.record(
    makeAttempt(listPets, {
      sentAt: T0 + 1500,
      receivedAt: T0 + 1510,
      status: 500,
      json: errorBody(500, 'internal_error'),
      headers: { 'content-type': 'application/json' },
    }),
  );
  recorder.measure(false);
  // Teardown (not measured).
  recorder.record(makeAttempt(listPets, { sentAt: T0 + 2500, receivedAt: T0 + 2510, json: [] }));
}

describe('Recorder', () => {
  it('counts requests, statuses, 429s, retries and transport errors per operation and overall', () => {
    const recorder = fed;
    expect(recorder.overall.requests).toBe(7);
    expect(recorder.overall.statuses).toEqual({ 200: 3, 201: 1, 429: 1, 500: 1 });
    expect(recorder.overall.transportErrors).toEqual({ ECONNRESET: 1 });
    expect(recorder.overall.rateLimited).toBe(1);
    expect(recorder.overall.retries).toBe(2);
    expect(recorder.overall.pacingWaitMs).toBe(30);
    expect(recorder.overall.backoffWaitMs).toBe(20);
    expect([...recorder.operations.keys()].sort()).toEqual(['createPet', 'listPets']);
    const list = recorder.operations.get('listPets');
    const create = recorder.operations.get('createPet');
    expect(list?.requests).toBe(6);
    expect(list?.statuses).toEqual({ 200: 3, 429: 1, 500: 1 });
    expect(list?.rateLimited).toBe(1);
    expect(list?.retries).toBe(2);
    expect(create?.requests).toBe(1);
    expect(create?.statuses).toEqual({ 201: 1 });
    expect(create?.transportErrors).toEqual({});
    expect(recorder.overall.service.totalCount).toBe(7);
    expect(list?.service.totalCount).toBe(6);
  });

  it('counts admitted responses (not 429s, not transport errors) only while measuring', () => {
    const recorder = fed;
    // The 200, the 201 and the 500 of the workload; not setup or teardown, not the 429 or the reset.
    expect(recorder.admittedDuringWorkload).toBe(3);
  });

  it('runs the checks on every response with headers and counts the responses that fail one', () => {
    const recorder = fed;
    expect(recorder.overall.checkFailures).toBe(1);
    expect(recorder.operations.get('listPets')?.checkFailures).toBe(1);
    expect(recorder.operations.get('createPet')?.checkFailures).toBe(0);
    const checks = recorder.checks.snapshot();
    const headers = checks.find((c) => c.id === 'ratelimit-headers-present');
    // Six responses with headers (the reset has none).
    expect(headers).toMatchObject({ passes: 5, failures: 1 });
    expect(headers?.samples[0]).toMatchObject({ operation: 'listPets', status: 500, at: T0 + 1510 });
    expect(checks.find((c) => c.id === 'retry-after-on-429')).toMatchObject({ passes: 1, failures: 0 });
    expect(checks.find((c) => c.id === 'response-schema')).toMatchObject({ passes: 6, failures: 0 });
    for (const c of checks) if (c.id !== 'ratelimit-headers-present') expect(c.failures, c.id).toBe(0);
  });

  it('counts a response failing several checks once', () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    recorder.record(
      makeAttempt(getPetById, {
        status: 404,
        json: { nope: true },
        headers: { 'content-type': 'text/plain' },
      }),
    );
    expect(recorder.checks.snapshot().filter((c) => c.failures > 0).length).toBeGreaterThan(2);
    expect(recorder.overall.checkFailures).toBe(1);
  });

  it('uses the checks it is given', () => {
    const recorder = new Recorder({
      startedAt: T0,
      windows: FREE_WINDOWS,
      checks: [
        {
          id: 'no-404',
          rule: 'never 404',
          source: 'test',
          evaluate: ({ status }) => (status === 404 ? 'a 404' : undefined),
        },
      ],
      clientChecks: [],
    });
    recorder.record(makeAttempt(listPets, { json: [] }));
    recorder.record(makeAttempt(getPetById, { status: 404, json: errorBody(404) }));
    expect(recorder.checks.snapshot()).toEqual([
      expect.objectContaining({ id: 'no-404', passes: 1, failures: 1 }),
    ]);
    expect(recorder.operations.get('getPetById')?.checkFailures).toBe(1);
  });

  it('counts attempts in runs, yet every read sees each attempt recorded before it, in order', () => {
    const seen: number[] = [];
    const recorder = new Recorder({
      startedAt: T0,
      windows: FREE_WINDOWS,
      checks: [
        { id: 'order', rule: 'r', source: 's', evaluate: ({ attempt }) => void seen.push(attempt.sentAt) },
      ],
      clientChecks: [],
      workloadOnly: true,
    });
    // Setup's attempt is not measured, the workload's are: the switch counts what came before it as it came.
    recorder.record(makeAttempt(listPets, { sentAt: T0, json: [] }));
    recorder.measure(true, T0 + 100);
    for (let i = 1; i <= 1000; i++)
      recorder.record(makeAttempt(listPets, { sentAt: T0 + 100 + i, json: [] }));
    expect(recorder.overall.requests).toBe(1001);
    expect(recorder.overall.duringWorkload).toBe(1000);
    expect(recorder.admittedDuringWorkload).toBe(1000);
    expect(seen).toEqual([T0, ...Array.from({ length: 1000 }, (_, i) => T0 + 101 + i)]);
    // One more, read through another figure: it is there too.
    recorder.record(makeAttempt(getPetById, { sentAt: T0 + 2000, status: 404, json: errorBody(404) }));
    expect(recorder.operations.get('getPetById')?.requests).toBe(1);
    recorder.record(makeAttempt(listPets, { sentAt: T0 + 2100, json: [] }));
    recorder.measure(false, T0 + 3000);
    recorder.record(makeAttempt(listPets, { sentAt: T0 + 3100, json: [] }));
    expect(recorder.overall.requests).toBe(1004);
    expect(recorder.overall.duringWorkload).toBe(1002);
  });

  it('measures service time from the send and response time from when the call was due, less waits', () => {
    const recorder = fed;
    const create = recorder.operations.get('createPet');
    // Sent 1300, received 1340: 40 ms. Due at 1200, 30 ms pacing and 20 ms backoff: 140 - 50 = 90 ms.
    expect(latencyStats(create!.service).p50).toBeCloseTo(40, 1);
    expect(latencyStats(create!.response).p50).toBeCloseTo(90, 1);
    // Without a schedule, response time is service time.
    const list = recorder.operations.get('listPets');
    expect(latencyStats(list!.response).max).toBe(latencyStats(list!.service).max);
  });

  it('never reports a response time shorter than the service time', () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    // Waits larger than the time since due (a retry's backoff) would make it negative.
    recorder.record(
      makeAttempt(listPets, {
        sentAt: T0,
        receivedAt: T0 + 25,
        scheduledAt: T0,
        backoffWaitMs: 500,
        json: [],
      }),
    );
    expect(latencyStats(recorder.overall.response).min).toBeCloseTo(25, 1);
  });

  it('feeds the timeline and the violation counter', () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    feed(recorder);
    const timeline = recorder.timeline.snapshot();
    expect(timeline.map((p) => [p.t, p.requests, p.ok, p.rateLimited, p.errors])).toEqual([
      [0, 3, 2, 1, 0],
      [1, 3, 1, 0, 2],
      [2, 1, 1, 0, 0],
    ]);
    // The 429 at T0 + 210 said Retry-After 1: the sends at 1300, 1400 and 1500 are after its window,
    expect(recorder.violations.count).toBe(0);
    // but one sent at T0 + 700 is inside it.
    recorder.record(
      makeAttempt(listPets, { keyLabel: 'free', sentAt: T0 + 700, receivedAt: T0 + 710, json: [] }),
    );
    expect(recorder.violations.count).toBe(1);
  });
});

describe('Recorder and the refusals of a limiter that says no in other words', () => {
  it('counts every refusal as rate limited, by status; a bare 503 apart; a bare 403 after admissions apart', () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    const at = (
      ms: number,
      status: number,
      headers: Record<string, string | undefined> = {},
      keyLabel = 'free',
    ) =>
      recorder.record(
        makeAttempt(listPets, {
          keyLabel,
          status,
          sentAt: T0 + ms,
          headers: { ...okHeaders(T0 + ms + 10), ...headers },
          json: status >= 400 ? errorBody(status) : [],
        }),
      );
    at(0, 403); // the key's first answer: an authorization failure, nothing admitted before it
    at(100, 200);
    at(200, 429, { 'retry-after': '1' });
    at(300, 503, { 'retry-after': '1' });
    at(400, 503, { 'x-ratelimit-remaining': '2' });
    at(500, 403, { 'x-ratelimit-remaining': '0' });
    at(600, 403);
    at(700, 403, {}, 'pro'); // another key, never admitted: no limiter's refusal to suspect
    const o = recorder.overall;
    expect(o.rateLimited).toBe(3);
    expect(o.refusals).toEqual({ 403: 1, 429: 1, 503: 1 });
    expect(o.unexplained).toBe(1);
    expect(recorder.forbiddenAfterAdmitted).toBe(1);
    expect(o.statuses).toEqual({ 200: 1, 403: 4, 429: 1, 503: 2 });
  });
});

describe('Recorder and deferred verdicts', () => {
  /** A window of 5 with 3 left, then a 429 in it that nothing in between explains. */
  function early429(recorder: Recorder, body: unknown = { nope: true }): void {
    const reset = { 'x-ratelimit-reset': String(T0 / 1000 + 30) };
    recorder.record(
      makeAttempt(listPets, {
        sentAt: T0,
        receivedAt: T0 + 10,
        json: [],
        headers: { ...okHeaders(T0 + 10), ...reset, 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '3' },
      }),
    );
    recorder.record(
      makeAttempt(listPets, {
        sentAt: T0 + 20,
        receivedAt: T0 + 30,
        status: 429,
        json: body,
        headers: {
          ...okHeaders(T0 + 30),
          ...reset,
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'retry-after': '30',
        },
      }),
    );
  }

  it('counts a 429 judged after the workload once, even when it failed another check already', () => {
    const recorder = new Recorder({ startedAt: T0, windows: [{ name: 'minute', limit: 5, seconds: 60 }] });
    recorder.measure(true, T0);
    early429(recorder);
    // The 429's body is not an Error object: it failed a check when it arrived.
    expect(recorder.overall.checkFailures).toBe(1);
    const spent = () => recorder.checks.snapshot().find((c) => c.id === 'ratelimit-429-only-when-spent');
    expect(spent()).toMatchObject({ passes: 0, failures: 0 });
    recorder.measure(false, T0 + 100);
    expect(spent()).toMatchObject({ passes: 0, failures: 1 });
    expect(recorder.overall.checkFailures).toBe(1);
    expect(recorder.operations.get('listPets')?.checkFailures).toBe(1);
  });

  it('counts a response whose only failure comes later, with finish() for direct use', () => {
    const recorder = new Recorder({ startedAt: T0, windows: [{ name: 'minute', limit: 5, seconds: 60 }] });
    early429(recorder, errorBody(429, 'rate_limited'));
    expect(recorder.overall.checkFailures).toBe(0);
    recorder.finish(T0 + 100);
    expect(recorder.overall.checkFailures).toBe(1);
    expect(recorder.operations.get('listPets')?.checkFailures).toBe(1);
    expect(recorder.checks.snapshot().find((c) => c.id === 'ratelimit-429-only-when-spent')?.failures).toBe(
      1,
    );
  });
});
