import { describe, expect, it } from 'vitest';
import { buildTenantMix } from '../../src/api/tenants.ts';
import { BUCKET_BOUNDS_SECONDS, BUCKET_LABELS, classicBuckets } from '../../src/metrics/buckets.ts';
import { RecorderSource } from '../../src/metrics/from-recorder.ts';
import type { Series } from '../../src/metrics/series.ts';
import { newHistogram } from '../../src/record/histogram.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { FREE_WINDOWS, makeAttempt, operation, T0 } from '../helpers/unit-attempt.ts';

const value = (series: Series[], name: string, labels: Record<string, string> = {}) =>
  series.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('classic buckets from an HDR histogram', () => {
  it('are geometric from 0.1 ms to past 60 s, then +Inf', () => {
    expect(BUCKET_BOUNDS_SECONDS[0]).toBe(0.0001);
    expect(BUCKET_BOUNDS_SECONDS.at(-1)).toBeGreaterThan(60);
    expect(BUCKET_LABELS.at(-1)).toBe('+Inf');
    for (let i = 1; i < BUCKET_BOUNDS_SECONDS.length; i++)
      expect((BUCKET_BOUNDS_SECONDS[i] as number) / (BUCKET_BOUNDS_SECONDS[i - 1] as number)).toBeCloseTo(
        1.5,
        1,
      );
  });

  it('count at or below each bound, and put the HDR p99 in the bucket histogram_quantile reads', () => {
    const h = newHistogram();
    // Log-uniform latencies from 0.2 ms to 2 s, deterministic.
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 48271) % 2147483647;
      h.recordValue(Math.round(200 * 10_000 ** (seed / 2147483647)));
    }
    const { cumulative, count, sum } = classicBuckets(h);
    expect(count).toBe(20_000);
    expect(cumulative.at(-1)).toBe(20_000);
    expect(sum).toBeCloseTo((h.mean * 20_000) / 1e6, 6);
    for (let i = 1; i < cumulative.length; i++)
      expect(cumulative[i]).toBeGreaterThanOrEqual(cumulative[i - 1] as number);
    for (const p of [50, 90, 99, 99.9]) {
      const hdrSeconds = h.getValueAtPercentile(p) / 1e6;
      const hdrBucket = BUCKET_BOUNDS_SECONDS.findIndex((b) => hdrSeconds <= b);
      // histogram_quantile: the first bucket whose cumulative count reaches the rank.
      const rank = (p / 100) * count;
      const promBucket = cumulative.findIndex((c) => c >= rank);
      expect(promBucket, `p${p}`).toBe(hdrBucket);
    }
  });

  it('reads a histogram that grew since its last push through the grown layout', () => {
    const h = newHistogram();
    h.recordValue(150);
    expect(classicBuckets(h).cumulative[1]).toBe(1);
    // 40 s: past the counts array the first value needed, so hdr grows it.
    h.recordValue(40_000_000);
    const { cumulative, count, sum } = classicBuckets(h);
    expect(count).toBe(2);
    // At or below a bound: 150 µs at 0.00015 s, 40 s past 28.8 s and not past 43.1 s.
    const at = (bound: number) => cumulative[BUCKET_BOUNDS_SECONDS.indexOf(bound)];
    expect(at(0.00015)).toBe(1);
    expect(at(28.8)).toBe(1);
    expect(at(43.1)).toBe(2);
    expect(sum).toBeCloseTo((h.mean * 2) / 1e6, 6);
  });

  it('is not walked again while nothing was recorded', () => {
    const h = newHistogram();
    h.recordValue(1000);
    const first = classicBuckets(h);
    expect(classicBuckets(h)).toBe(first);
    h.recordValue(2000);
    expect(classicBuckets(h)).not.toBe(first);
  });
});

describe('series from a live recorder', () => {
  it("equal the recorder's counters, with status classes, error kinds and the quota's Remaining", async () => {
    const list = await operation('listPets');
    const create = await operation('createPet');
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    recorder.record(makeAttempt(list, { sentAt: T0, receivedAt: T0 + 5 }));
    recorder.record(makeAttempt(list, { sentAt: T0 + 10, receivedAt: T0 + 40, pacingWaitMs: 1500 }));
    recorder.record(makeAttempt(list, { sentAt: T0 + 50, receivedAt: T0 + 60, status: 429, retried: true }));
    recorder.record(makeAttempt(create, { sentAt: T0, receivedAt: T0 + 9, status: 503 }));
    recorder.record(
      makeAttempt(create, {
        sentAt: T0,
        receivedAt: T0 + 9,
        status: 0,
        errorCode: 'ECONNRESET',
        headers: undefined,
      }),
    );
    const source = new RecorderSource(
      { recorder, pacing: () => ({ cause: 'pacing', until: T0 + 100 }) },
      FREE_WINDOWS,
      T0,
    );
    const series = source.collect(T0 + 1000);
    const requests = 'petstore_load_requests_total';
    expect(value(series, requests, { operation: 'listPets', status_class: '2xx' })).toBe(2);
    expect(value(series, requests, { operation: 'listPets', status_class: '4xx' })).toBe(1);
    expect(value(series, requests, { operation: 'listPets', status_class: '5xx' })).toBe(0);
    expect(value(series, requests, { operation: 'createPet', status_class: '5xx' })).toBe(1);
    expect(value(series, requests, { operation: 'createPet', status_class: 'error' })).toBe(1);
    expect(value(series, 'petstore_load_rate_limited_total', { operation: 'listPets' })).toBe(1);
    expect(value(series, 'petstore_load_retries_total', { operation: 'listPets' })).toBe(1);
    expect(value(series, 'petstore_load_errors_total', { operation: 'createPet', kind: '503' })).toBe(1);
    expect(value(series, 'petstore_load_errors_total', { operation: 'createPet', kind: 'ECONNRESET' })).toBe(
      1,
    );
    expect(value(series, 'petstore_load_pacing_wait_seconds_total', { operation: 'listPets' })).toBe(1.5);
    expect(value(series, 'petstore_load_response_time_seconds_count', { operation: 'listPets' })).toBe(3);
    expect(
      value(series, 'petstore_load_service_time_seconds_bucket', { operation: 'listPets', le: '+Inf' }),
    ).toBe(3);
    expect(value(series, 'petstore_load_quota_remaining', { key_group: 'free' })).toBe(59);
    expect(value(series, 'petstore_load_pacing_state', { cause: 'pacing' })).toBe(1);
    expect(value(series, 'petstore_load_pacing_state', { cause: 'pause' })).toBe(0);
    expect(value(series, 'petstore_load_violations_total')).toBe(0);
    // No label value anywhere is other than a name, an id, a class or a number.
    for (const s of series) for (const v of Object.values(s.labels)) expect(v).toMatch(/^[A-Za-z0-9_+.#-]+$/);
  });

  it("a tenant mix counts its keys by what holds each back, not the run's own key", () => {
    const mix = buildTenantMix(
      [{ plan: 'free', keys: 3 }],
      () => FREE_WINDOWS,
      (plan, n) => `${plan}-${n}`,
    );
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, tenants: mix });
    const keys = { ready: 2, pacing: 0, budget: 0, pause: 1, inflight: 0 };
    const source = new RecorderSource(
      { recorder, pacing: () => ({ cause: 'ready', until: T0 }), keys: () => keys },
      FREE_WINDOWS,
      T0,
    );
    const series = source.collect(T0 + 1000);
    const state = series.filter((s) => s.name === 'petstore_load_pacing_state');
    expect(Object.fromEntries(state.map((s) => [s.labels.cause, s.value]))).toEqual(keys);
  });

  it("utilisation: the window's quota admitted over the last window, or so far when the run is younger", async () => {
    const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS });
    recorder.measure(true, T0);
    const source = new RecorderSource({ recorder }, FREE_WINDOWS, T0);
    const get = await operation('getPetById');
    const utilisation = (at: number, window: string) =>
      value(source.collect(at), 'petstore_load_quota_utilisation_ratio', { window });
    // 1 admitted a second for 3 minutes, a collection every 5 s.
    let at = T0;
    for (let i = 0; i < 36; i++) {
      at += 5000;
      for (let k = 0; k < 5; k++)
        recorder.record(makeAttempt(get, { sentAt: at - 1000 * k - 10, receivedAt: at - 1000 * k - 5 }));
      const minute = utilisation(at, 'minute') as number;
      if (at - T0 >= 60_000) expect(minute).toBeCloseTo(1, 5);
      else expect(minute).toBeCloseTo((at - T0) / 1000 / 60, 5);
    }
    // The day's window: 180 of 1000 spent so far.
    expect(utilisation(at + 1, 'day')).toBeCloseTo(0.18, 5);
  });

  it('never sends two samples of one series at one time: windows of one name, or one key group twice', () => {
    const windows = [
      { name: 'minute', limit: 60, seconds: 60 },
      { name: 'minute', limit: 1000, seconds: 600 },
    ];
    const recorder = new Recorder({ startedAt: T0, windows });
    const series = new RecorderSource({ recorder }, windows, T0).collect(T0 + 5000);
    const keys = series.map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(
      series.filter((s) => s.name === 'petstore_load_quota_utilisation_ratio').map((s) => s.labels.window),
    ).toEqual(['minute', 'minute#2']);
  });
});
