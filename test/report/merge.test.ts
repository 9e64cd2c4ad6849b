import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import type { Operation } from '../../src/api/operations.ts';
import { seededRandom } from '../../src/api/random.ts';
import { asCheckpoint } from '../../src/cli/checkpoint.ts';
import { merge } from '../../src/cli/merge.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { decodeHistogram, latencyStats, newHistogram } from '../../src/record/histogram.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { mergeHeaderDialects } from '../../src/report/merge-records.ts';
import { buildResult } from '../../src/result/build.ts';
import type { HeaderDialect, RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { syntheticConfig, syntheticMeta } from '../helpers/synthetic-result.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operations, T0 } from '../helpers/unit-attempt.ts';

/**
 * Results built the way a run builds them (Recorder, then buildResult) from synthetic attempts with
 * known latencies, merged, and held against one recorder fed every attempt of every part: the
 * merged percentiles must be exactly those of one histogram of all samples.
 */

let ops: Operation[];
const op = (id: string) => ops.find((o) => o.id === id) as Operation;
const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

interface Part {
  start: number;
  seconds: number;
  attempts: AttemptRecord[];
  scenario?: string;
  target?: string;
  embedded?: boolean;
  plan?: string;
  partial?: boolean;
  seed?: number;
}

/** `count` attempts spread over the part, latencies drawn from a seeded long-tailed distribution. */
function attempts(start: number, seconds: number, count: number, seed: number): AttemptRecord[] {
  const random = seededRandom(seed);
  const out: AttemptRecord[] = [];
  const keyLabel = `worker-${seed}`;
  for (let i = 0; i < count; i++) {
    const sentAt = start + (i * seconds * 1000) / count;
    // 2 to ~200 ms with a heavy tail, to the microsecond.
    const latency = Math.round((2 + 5 * Math.log(1 - random()) ** 2) * 1000) / 1000;
    const receivedAt = sentAt + latency;
    const kind = random();
    if (kind < 0.05) {
      out.push(
        makeAttempt(op('listPets'), {
          sentAt,
          receivedAt,
          status: 429,
          json: errorBody(429, 'rate_limited'),
          headers: { ...okHeaders(receivedAt), 'x-ratelimit-remaining': '0', 'retry-after': '1' },
          retried: true,
        }),
      );
    } else if (kind < 0.08) {
      out.push(makeAttempt(op('listPets'), { sentAt, receivedAt, status: 500, json: errorBody(500) }));
    } else if (kind < 0.1) {
      out.push(
        makeAttempt(op('createPet'), {
          sentAt,
          receivedAt,
          status: 0,
          errorCode: 'UND_ERR_SOCKET',
          headers: undefined,
        }),
      );
    } else if (kind < 0.4) {
      // Deprecated and sent without its deprecation headers: a check failure with samples.
      out.push(makeAttempt(op('getPetById'), { sentAt, receivedAt, json: pet, pacingWaitMs: 3 }));
    } else {
      // Due earlier than sent: response time exceeds service time (the coordinated-omission view).
      out.push(makeAttempt(op('listPets'), { sentAt, receivedAt, scheduledAt: sentAt - 1.5, json: [pet] }));
    }
  }
  // Each worker its own key, as separate processes would have: the checks that compare responses
  // of one key must not pair one worker's with another's.
  return out.map((a) => ({ ...a, keyLabel }));
}

function record(recorder: Recorder, list: AttemptRecord[]): void {
  for (const a of list) recorder.record(a);
}

function build(part: Part): RunResult {
  const recorder = new Recorder({ startedAt: part.start, windows: FREE_WINDOWS, workloadOnly: true });
  recorder.measure(true, part.start);
  record(recorder, part.attempts);
  recorder.measure(false);
  const flows = {
    browse: { iterations: part.attempts.length, failures: 1, firstError: `boom at ${part.start}` },
  };
  return buildResult({
    meta: syntheticMeta({
      nodeVersion: 'v20.19.0',
      scenario: part.scenario ?? 'unit',
      target: part.target ?? 'http://127.0.0.1:8080',
      embeddedTarget: part.embedded ?? false,
      plan: part.plan ?? 'free',
      startedAt: new Date(part.start).toISOString(),
      endedAt: new Date(part.start + part.seconds * 1000).toISOString(),
      partial: part.partial ?? false,
    }),
    config: syntheticConfig({ workload: { executor: 'constant-vus', vus: 2 }, seed: part.seed ?? 1 }),
    recorder,
    operations: ops,
    workload: { iterations: part.attempts.length, droppedIterations: 2, failedIterations: 1, flows },
  });
}

/** Two workers at once (the second a second later), then a third run after a gap. */
let parts: Part[];
let results: RunResult[];
let merged: RunResult;
/** One recorder fed every attempt of every part, its timeline from the earliest start. */
let all: Recorder;

beforeAll(async () => {
  ops = [...(await operations()).values()];
  parts = [
    { start: T0, seconds: 10, attempts: [] },
    { start: T0 + 1000, seconds: 10, attempts: [], scenario: 'other' },
    { start: T0 + 20_000, seconds: 10, attempts: [], partial: true },
  ];
  parts.forEach((p, i) => {
    p.attempts = attempts(p.start, p.seconds, [400, 300, 200][i] as number, i + 1);
    p.seed = i + 1;
  });
  results = parts.map(build);
  merged = mergeResults(results);
  all = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
  all.measure(true, T0);
  record(
    all,
    parts.flatMap((p) => p.attempts).sort((a, b) => a.receivedAt - b.receivedAt),
  );
  all.measure(false);
});

describe('mergeResults', () => {
  it('gives exactly the percentiles of one histogram fed every sample', () => {
    const service = newHistogram();
    for (const a of parts.flatMap((p) => p.attempts))
      service.recordValue(Math.max(1, Math.round((a.receivedAt - a.sentAt) * 1000)));
    expect(merged.overall.service).toEqual(latencyStats(service));
    expect(merged.overall.service.count).toBe(900);
    expect(merged.overall.response).toEqual(latencyStats(all.overall.response));
    for (const [id, stats] of all.operations) {
      expect(merged.operations[id]?.service, id).toEqual(latencyStats(stats.service));
      expect(merged.operations[id]?.response, id).toEqual(latencyStats(stats.response));
    }
    // The encoded histograms are the sums too (their extremes to the bucket: the stats keep them exact).
    // Percentiles are capped at the exact max, as a run's own are.
    const { min, max, ...decoded } = latencyStats(decodeHistogram(merged.overall.histograms.response));
    const exactMax = merged.overall.response.max;
    const capped = Object.fromEntries(
      Object.entries(decoded).map(([k, v]) => [k, k.startsWith('p') ? Math.min(v, exactMax) : v]),
    );
    expect(merged.overall.response).toMatchObject(capped);
    expect(max).toBeGreaterThanOrEqual(exactMax);
    // Not an average of the parts' percentiles.
    const mean = results.reduce((n, r) => n + r.overall.service.p99, 0) / results.length;
    expect(merged.overall.service.p99).not.toBe(mean);
  });

  it('sums the counters, per operation too, and keeps what describes each operation', () => {
    const o = all.overall;
    expect(merged.overall).toMatchObject({
      requests: o.requests,
      statuses: o.statuses,
      rateLimited: o.rateLimited,
      rateLimitedRate: o.rateLimited / o.requests,
      retries: o.retries,
      transportErrors: o.transportErrors,
      pacingWaitMs: Math.round(o.pacingWaitMs),
      checkFailures: o.checkFailures,
    });
    expect(merged.overall.rateLimited).toBeGreaterThan(0);
    expect(merged.overall.transportErrors.UND_ERR_SOCKET).toBeGreaterThan(0);
    expect(merged.overall.statuses['500']).toBeGreaterThan(0);
    for (const [id, stats] of all.operations)
      expect(merged.operations[id], id).toMatchObject({ requests: stats.requests, statuses: stats.statuses });
    expect(merged.operations.getPetById).toMatchObject({
      method: 'GET',
      path: '/pets/{petId}',
      deprecated: true,
    });
    expect(merged.workload).toEqual({
      iterations: 900,
      droppedIterations: 6,
      failedIterations: 3,
      flows: { browse: { iterations: 900, failures: 3, firstError: `boom at ${T0}` } },
    });
  });

  it('counts rates over the time when any part ran: concurrent parts add, a gap counts for nothing', () => {
    // [T0, T0+11 s] (two workers overlapping) and [T0+20 s, T0+30 s]: 21 s covered, 30 s spanned.
    expect(merged.overall.rate).toBeCloseTo(900 / 21, 9);
    expect(merged.operations.listPets?.rate).toBeCloseTo(
      (all.operations.get('listPets')?.requests ?? 0) / 21,
      9,
    );
    const admitted = results.reduce((n, r) => n + r.compliance.admitted, 0);
    expect(merged.compliance).toMatchObject({
      admitted,
      planRate: 1,
      rateLimited: all.overall.rateLimited,
      violations: results.reduce((n, r) => n + r.compliance.violations, 0),
    });
    // 21 s covered at the free plan's 1/s: 21 intervals, and the request at the start.
    expect(merged.compliance.quotaUtilization).toBeCloseTo(admitted / 22, 9);
    expect(merged.compliance.violationSamples.length).toBeLessThanOrEqual(5);
  });

  it('merges the timelines on the wall clock, adding the counts of each second', () => {
    const reference = all.timeline.snapshot();
    const pick = ({ t, requests, ok, rateLimited, errors, pacingWaitMs }: (typeof reference)[number]) => ({
      t,
      requests,
      ok,
      rateLimited,
      errors,
      pacingWaitMs,
    });
    expect(merged.timeline.map(pick)).toEqual(reference.map(pick));
    expect(merged.timeline.at(-1)?.t).toBe(29);
    // The percentiles of a second are approximations that stay within the parts' bounds; p99 errs high.
    for (const [i, point] of merged.timeline.entries()) {
      const truth = reference[i] as (typeof reference)[number];
      expect(point.p99).toBeGreaterThanOrEqual(truth.p99);
      const own = results.flatMap((r) =>
        r.timeline.filter((p) => Math.round((Date.parse(r.meta.startedAt) - T0) / 1000) + p.t === point.t),
      );
      expect(point.p50).toBeGreaterThanOrEqual(Math.min(...own.map((p) => p.p50)) - 1e-9);
      expect(point.p50).toBeLessThanOrEqual(Math.max(...own.map((p) => p.p50)) + 1e-9);
    }
  });

  it('puts a part that started mid-second in the merged second it overlaps most', () => {
    const late = (ms: number) =>
      mergeResults([
        results[0] as RunResult,
        build({ start: T0 + ms, seconds: 2, attempts: attempts(T0 + ms, 2, 5, 9) }),
      ]);
    const tOf = (r: RunResult) => r.timeline.filter((p) => p.requests > 0).map((p) => p.t);
    expect(tOf(late(1400))).toEqual(tOf(results[0] as RunResult));
    expect(late(1600).timeline.find((p) => p.t === 3)?.requests).toBeGreaterThan(
      (results[0] as RunResult).timeline.find((p) => p.t === 3)?.requests ?? 0,
    );
  });

  it('merges checks by id, summing them and keeping the earliest samples', () => {
    // Not the one recorder's passes: response-schema samples bodies per recorder and second.
    const sum = (id: string, field: 'passes' | 'failures') =>
      results.reduce((n, r) => n + (r.checks.find((c) => c.id === id)?.[field] ?? 0), 0);
    expect(merged.checks.map((c) => [c.id, c.passes, c.failures])).toEqual(
      results[0]?.checks.map((c) => [c.id, sum(c.id, 'passes'), sum(c.id, 'failures')]),
    );
    const reference = all.checks.snapshot();
    expect(merged.checks.map((c) => c.failures)).toEqual(reference.map((c) => c.failures));
    const deprecation = merged.checks.find((c) => c.id === 'deprecation-headers');
    expect(deprecation?.failures).toBeGreaterThan(5);
    expect(deprecation?.samples).toEqual(reference.find((c) => c.id === 'deprecation-headers')?.samples);
    expect(deprecation?.samples).toHaveLength(5);
  });

  it('adds the dialects counted by each part, and reads the one detected again from the sums', () => {
    const seen = results.reduce((n, r) => n + (r.compliance.headerDialect?.counts.seed ?? 0), 0);
    expect(seen).toBeGreaterThan(0);
    expect(merged.compliance.headerDialect).toEqual({
      contract: 'seed',
      detected: 'seed',
      alsoSent: [],
      counts: { seed: seen },
    });
    expect(merged.compliance.headerDialect).toEqual(all.headerDialect());
    const dialect = (h: Partial<HeaderDialect>): HeaderDialect => ({
      contract: 'ietf',
      detected: 'ietf-8',
      alsoSent: [],
      counts: {},
      ...h,
    });
    expect(
      mergeHeaderDialects([
        dialect({ counts: { 'ietf-8': 3, none: 1 }, alsoSent: ['seed'] }),
        undefined,
        dialect({
          contract: 'any',
          detected: 'ietf-6',
          counts: { 'ietf-6': 5 },
          alsoSent: ['unix-ms', 'seed'],
        }),
      ]),
    ).toEqual({
      contract: 'ietf',
      detected: 'ietf-6',
      alsoSent: ['seed', 'unix-ms'],
      counts: { 'ietf-8': 3, none: 1, 'ietf-6': 5 },
    });
    expect(mergeHeaderDialects([undefined, undefined])).toBeUndefined();
  });

  it('spans the parts in its meta, lists the scenarios and drops the parts’ thresholds', () => {
    const withThresholds = results.map((r) => ({
      ...r,
      thresholds: [{ expression: 'p95<1ms', source: 'cli' as const, actual: 1, passed: true }],
    }));
    const m = mergeResults(withThresholds);
    expect(m.thresholds).toBeUndefined();
    expect(m.meta).toMatchObject({
      scenario: 'unit, other',
      startedAt: new Date(T0).toISOString(),
      endedAt: new Date(T0 + 30_000).toISOString(),
      durationSeconds: 30,
      partial: true,
      plan: 'free',
      target: 'http://127.0.0.1:8080',
    });
    expect(m.meta.description).toMatch(/merged from 3 results/);
    // Each part had its own seed: none of them replays the merged result.
    expect(m.config.seed).toBeUndefined();
  });

  it('does not depend on the order the results are given in', () => {
    const reversed = mergeResults([...results].reverse());
    expect(reversed.overall).toEqual(merged.overall);
    expect(reversed.timeline).toEqual(merged.timeline);
    expect(reversed.checks).toEqual(merged.checks);
    expect(reversed.quota).toEqual(merged.quota);
    expect(reversed.meta).toEqual(merged.meta);
  });

  it('gives back the same figures for one result', () => {
    const one = results[0] as RunResult;
    const figures = (r: RunResult) =>
      JSON.parse(JSON.stringify(r, (key, value) => (key === 'histograms' ? undefined : value)));
    expect(figures(mergeResults([one]))).toEqual(figures(one));
  });

  it('builds results that follow the contract', () => {
    expect(resultProblem(merged)).toBeUndefined();
    expect(resultProblem(JSON.parse(JSON.stringify(merged)))).toBeUndefined();
    expect(resultProblem(mergeResults([results[2] as RunResult]))).toBeUndefined();
  });

  it('refuses what cannot be merged, naming the result', () => {
    const [a, b] = results as [RunResult, RunResult];
    const refused = (list: unknown[], labels?: string[]) => {
      try {
        mergeResults(list as RunResult[], labels);
      } catch (error) {
        expect(error).toBeInstanceOf(InputError);
        expect((error as InputError).exitCode).toBe(2);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused([])).toBe('merge: no results to merge');
    expect(refused([a, { ...b, schemaVersion: 2 }])).toBe(
      'result 2: schemaVersion 2; merge reads schemaVersion 1 only',
    );
    expect(refused([a, { ...b, schemaVersion: 2 }], ['a.json', 'b.json'])).toMatch(
      /^b\.json: schemaVersion 2/,
    );
    const pro = { ...b, meta: { ...b.meta, plan: 'pro' } };
    expect(refused([a, pro])).toMatch(
      /^result 2: plan pro .* differs from result 1's free .*cannot be merged$/,
    );
    const scaled = { ...b, config: { ...b.config, windows: [{ name: 'minute', limit: 60, seconds: 6 }] } };
    expect(refused([a, scaled])).toMatch(/^result 2: plan free \(60\/6s\) differs/);
    const elsewhere = { ...b, meta: { ...b.meta, target: 'https://api.example.test' } };
    expect(refused([a, elsewhere])).toMatch(/^result 2: target https:\/\/api\.example\.test differs/);
    const damaged = {
      ...b,
      overall: { ...b.overall, histograms: { ...b.overall.histograms, service: 'AAAA' } },
    };
    expect(refused([a, damaged])).toMatch(/^result 2: overall\.histograms\.service: not an HdrHistogram/);
  });

  it('merges embedded runs, each on its own port', () => {
    const x = build({ ...parts[0], target: 'http://127.0.0.1:40001', embedded: true } as Part);
    const y = build({ ...parts[1], target: 'http://127.0.0.1:40002', embedded: true } as Part);
    expect(mergeResults([x, y]).meta).toMatchObject({
      target: 'http://127.0.0.1:40001',
      embeddedTarget: true,
    });
  });
});

describe('mergeResults: the quota over time', () => {
  const seen = (at: number, remaining: number) =>
    makeAttempt(op('listPets'), {
      sentAt: at - 10,
      receivedAt: at,
      json: [pet],
      headers: okHeaders(at, { 'x-ratelimit-remaining': String(remaining) }),
    });
  const refused = (at: number, pauseMs: number) =>
    makeAttempt(op('listPets'), {
      sentAt: at - 10,
      receivedAt: at,
      status: 429,
      json: errorBody(429, 'rate_limited'),
      headers: { ...okHeaders(at), 'x-ratelimit-remaining': '0', 'retry-after': String(pauseMs / 1000) },
      pauseUntil: at + pauseMs,
      retried: true,
    });
  /** Two workers on one key, the second started a second later; their pauses overlap. */
  const first = () =>
    build({
      start: T0,
      seconds: 5,
      attempts: [seen(T0 + 100, 50), seen(T0 + 1100, 40), refused(T0 + 2000, 2000), seen(T0 + 4100, 59)],
    });
  const second = () =>
    build({
      start: T0 + 1000,
      seconds: 5,
      attempts: [seen(T0 + 1200, 45), refused(T0 + 3000, 2000), seen(T0 + 5100, 58)],
    });

  it('adds the requests of a second, keeps the lowest Remaining, and joins the pauses on one clock', () => {
    const [a, b] = [first(), second()];
    expect(a.quota?.[0]?.pauses).toEqual([{ from: 2, until: 4, by: 'retry-after', rateLimited: 1 }]);
    // In its own seconds: it started a second later.
    expect(b.quota?.[0]?.pauses).toEqual([{ from: 2, until: 4, by: 'retry-after', rateLimited: 1 }]);
    const quota = mergeResults([b, a]).quota;
    expect(quota).toEqual([
      {
        key: 'free',
        limit: 60,
        points: [
          { t: 0, requests: 1, rateLimited: 0, remainingMin: 50, remainingLast: 50 },
          { t: 1, requests: 2, rateLimited: 0, remainingMin: 40, remainingLast: 40 },
          { t: 2, requests: 1, rateLimited: 1, remainingMin: 0, remainingLast: 0 },
          { t: 3, requests: 1, rateLimited: 1, remainingMin: 0, remainingLast: 0 },
          { t: 4, requests: 1, rateLimited: 0, remainingMin: 59, remainingLast: 59, reset: true },
          // The second part saw the same window begin a moment later: one reset, the first.
          { t: 5, requests: 1, rateLimited: 0, remainingMin: 58, remainingLast: 58 },
        ],
        pauses: [{ from: 2, until: 5, by: 'retry-after', rateLimited: 2 }],
      },
    ]);
    expect(mergeResults([a, b]).quota).toEqual(quota);
    expect(resultProblem(mergeResults([a, b]))).toBeUndefined();
  });

  it('keeps resets a second apart when windows last a second', () => {
    const short = (r: RunResult) => ({
      ...r,
      config: { ...r.config, windows: [{ name: 's', limit: 10, seconds: 1 }] },
    });
    const resets = mergeResults([short(first()), short(second())]).quota?.[0]?.points.filter((p) => p.reset);
    expect(resets?.map((p) => p.t)).toEqual([4, 5]);
  });

  it('keeps the keys of parts apart, and adds the bands each part dropped', () => {
    const a = first();
    const other = structuredClone(second());
    const q = other.quota?.[0] as NonNullable<RunResult['quota']>[number];
    q.key = 'free (no key)';
    q.droppedPauses = 7;
    const merged = mergeResults([a, other]).quota ?? [];
    expect(merged.map((k) => [k.key, k.pauses.length, k.droppedPauses])).toEqual([
      ['free', 1, undefined],
      ['free (no key)', 1, 7],
    ]);
  });

  it('takes the quota of the parts that have one, and has none when no part has', () => {
    const a = first();
    const old = second();
    delete old.quota;
    expect(mergeResults([a, old]).quota).toEqual(a.quota);
    const older = first();
    delete older.quota;
    expect(mergeResults([older, old])).not.toHaveProperty('quota');
  });
});

describe('petstore-load merge', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-load-merge-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  const args = (files: string[], out: string) => ({
    files,
    out,
    o: out,
    fleet: undefined,
    _: ['merge'],
    $0: 'petstore-load',
  });

  it('writes the merged result and says where', async () => {
    const files = results.map((r, i) => file(`part-${i}.json`, r));
    const out = join(dir, 'out', 'merged.json');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await merge(args(files, out))).toBe(0);
      expect(log).toHaveBeenCalledWith(`merged 3 results into ${out}`);
    } finally {
      log.mockRestore();
    }
    const written = JSON.parse(readFileSync(out, 'utf8'));
    expect(resultProblem(written)).toBeUndefined();
    expect(written.overall.service).toEqual(merged.overall.service);
  });

  it('merges a checkpoint with finished parts: partial and a checkpoint, said with the file it came from', async () => {
    const [a, b] = results as [RunResult, RunResult];
    const files = [file('finished.json', a), file('result.partial.json', asCheckpoint(structuredClone(b)))];
    const out = join(dir, 'with-checkpoint.json');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await merge(args(files, out))).toBe(0);
      expect(log.mock.calls.map((c) => c.join(' '))).toEqual([
        `merged 2 results into ${out}`,
        expect.stringMatching(
          /^partial: .*result\.partial\.json: a checkpoint written while the run went on, its figures up to /,
        ),
      ]);
    } finally {
      log.mockRestore();
    }
    const written = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
    expect(resultProblem(written)).toBeUndefined();
    expect(written.meta).toMatchObject({ partial: true, checkpoint: true });
    expect(written.overall.requests).toBe(a.overall.requests + b.overall.requests);
  });

  it('names the file that is missing, invalid or of another schemaVersion', async () => {
    const good = file('good.json', results[0]);
    const out = join(dir, 'never.json');
    await expect(merge(args([good, join(dir, 'missing.json')], out))).rejects.toThrow(
      /^merge .*missing\.json: no such file$/,
    );
    const v2 = file('v2.json', { ...results[1], schemaVersion: 2 });
    await expect(merge(args([good, v2], out))).rejects.toThrow(
      /^merge .*v2\.json: schemaVersion 2; this petstore-load reads schemaVersion 1$/,
    );
    const invalid = file('invalid.json', {
      ...results[1],
      overall: { ...results[1]?.overall, requests: -1 },
    });
    await expect(merge(args([good, invalid], out))).rejects.toThrow(
      /^merge .*invalid\.json: not a valid result: \/overall\/requests must be >= 0$/,
    );
    await expect(merge(args([], out))).rejects.toThrow('merge: name at least one result file');
  });

  it('an -o that cannot be written: one line in words, exit 73, nothing half written', async () => {
    const files = results.map((r, i) => file(`unwritten-${i}.json`, r));
    const blocker = file('blocker', 'a file, not a folder');
    const out = join(blocker, 'merged.json');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await merge(args(files, out))).toBe(73);
      expect(stderr.mock.calls.map((c) => String(c[0]))).toEqual([
        `petstore-load: cannot write the merged result to ${out}: a part of the path is a file, not a directory (ENOTDIR)\n`,
      ]);
      expect(log).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      log.mockRestore();
    }
  });
});
