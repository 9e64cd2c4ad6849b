import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import type { Operation } from '../../src/api/operations.ts';
import { seededRandom } from '../../src/api/random.ts';
import { compare, compareWithBaseline } from '../../src/cli/compare.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import { Recorder } from '../../src/record/recorder.ts';
import { type Comparison, compareResults, type MetricComparison } from '../../src/report/compare.ts';
import { formatComparison } from '../../src/report/compare-text.ts';
import { DEFAULT_TOLERANCES, parseTolerances } from '../../src/report/tolerances.ts';
import { buildResult } from '../../src/result/build.ts';
import type { RunResult } from '../../src/result/types.ts';
import { loadScenario } from '../../src/scenario/load.ts';
import { runInProcess } from '../helpers/integration-run.ts';
import { syntheticConfig, syntheticMeta } from '../helpers/synthetic-result.ts';
import { errorBody, FREE_WINDOWS, makeAttempt, okHeaders, operations, T0 } from '../helpers/unit-attempt.ts';

/**
 * compareResults on results built as a run builds them (Recorder, buildResult) from synthetic
 * attempts with known latency distributions, and on real short runs against the reference server:
 * no regression between two runs of one scenario, a regression when the server is slowed down.
 */

let ops: Operation[];
const op = (id: string) => ops.find((o) => o.id === id) as Operation;
const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };

interface Synthetic {
  seed: number;
  seconds?: number;
  perSecond?: number;
  /** Multiplies every latency. */
  scale?: number;
  errorShare?: number;
  rateLimitedShare?: number;
  /** Adds this many ms to every request of one second (a stall). */
  stall?: { second: number; ms: number };
}

/** A run of `seconds` at `perSecond` requests: listPets and getPetById, latencies 2 ms plus an exponential tail. */
function synthetic(s: Synthetic): RunResult {
  const seconds = s.seconds ?? 20;
  const perSecond = s.perSecond ?? 100;
  const random = seededRandom(s.seed);
  const recorder = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
  recorder.measure(true, T0);
  for (let i = 0; i < seconds * perSecond; i++) {
    const sentAt = T0 + (i * 1000) / perSecond;
    let latency = (s.scale ?? 1) * (2 + 3 * -Math.log(1 - random()));
    if (s.stall && Math.floor((sentAt - T0) / 1000) === s.stall.second) latency += s.stall.ms;
    const receivedAt = sentAt + Math.round(latency * 1000) / 1000;
    const kind = random();
    let attempt: AttemptRecord;
    if (kind < (s.errorShare ?? 0)) {
      attempt = makeAttempt(op('listPets'), { sentAt, receivedAt, status: 500, json: errorBody(500) });
    } else if (kind < (s.errorShare ?? 0) + (s.rateLimitedShare ?? 0)) {
      attempt = makeAttempt(op('listPets'), {
        sentAt,
        receivedAt,
        status: 429,
        json: errorBody(429, 'rate_limited'),
        headers: { ...okHeaders(receivedAt), 'x-ratelimit-remaining': '0', 'retry-after': '1' },
      });
    } else if (random() < 0.3) {
      attempt = makeAttempt(op('getPetById'), { sentAt, receivedAt, json: pet });
    } else {
      attempt = makeAttempt(op('listPets'), { sentAt, receivedAt, json: [pet] });
    }
    recorder.record(attempt);
  }
  recorder.measure(false);
  return buildResult({
    meta: syntheticMeta({ embeddedTarget: false, endedAt: new Date(T0 + seconds * 1000).toISOString() }),
    config: syntheticConfig({ workload: { executor: 'constant-arrival-rate', rate: perSecond } }),
    recorder,
    operations: ops,
    workload: { iterations: seconds * perSecond, droppedIterations: 0, failedIterations: 0, flows: {} },
  });
}

const metric = (c: Comparison, row: string, name: MetricComparison['metric']) =>
  c.rows.find((r) => r.name === row)?.metrics.find((m) => m.metric === name) as MetricComparison;
const regressions = (c: Comparison) =>
  c.rows.flatMap((r) =>
    r.metrics.filter((m) => m.verdict === 'regression').map((m) => `${r.name} ${m.metric}`),
  );

let baseline: RunResult;

beforeAll(async () => {
  ops = [...(await operations()).values()];
  baseline = synthetic({ seed: 1 });
});

describe('compareResults', () => {
  it('finds nothing between a result and itself', () => {
    const c = compareResults(baseline, baseline);
    expect(c.regressions).toBe(0);
    expect(c.improvements).toBe(0);
    expect(c.rows.map((r) => r.name)).toEqual(['listPets', 'getPetById', 'all']);
    for (const row of c.rows)
      for (const m of row.metrics) {
        expect(m.significance, `${row.name} ${m.metric}`).not.toBe('significant');
        expect(m.delta).toBe(0);
      }
    expect(formatComparison(c)).toMatch(/\nverdict: no regression$/);
  });

  it('finds nothing between two samples of one distribution', () => {
    for (const seed of [2, 3, 4]) {
      const other = synthetic({ seed });
      expect(regressions(compareResults(baseline, other)), `seed ${seed}`).toEqual([]);
      expect(regressions(compareResults(other, baseline)), `seed ${seed}`).toEqual([]);
    }
  });

  it('flags latencies 50% higher, overall and per operation, with intervals that exclude 1', () => {
    const slower = synthetic({ seed: 2, scale: 1.5 });
    const c = compareResults(baseline, slower);
    for (const row of ['all', 'listPets', 'getPetById'])
      for (const p of ['p50', 'p95', 'p99'] as const) {
        const m = metric(c, row, p);
        expect(m.verdict, `${row} ${p}`).toBe('regression');
        expect(m.significance).toBe('significant');
        expect(m.interval?.lower).toBeGreaterThan(1);
        expect(m.relative).toBeGreaterThan(0.25);
      }
    expect(metric(c, 'all', 'rps').verdict).toBe('ok');
    expect(metric(c, 'all', 'errors').verdict).toBe('ok');
    expect(c.regressions).toBe(9);
    const text = formatComparison(c);
    expect(text).toMatch(/^all +p50 ms .* significant REGRESSION$/m);
    expect(text).toMatch(/\nverdict: 9 regressions: listPets p50 \+\d+\.\d%, /);
  });

  it('calls latencies 50% lower an improvement, not a regression', () => {
    const c = compareResults(baseline, synthetic({ seed: 2, scale: 0.5 }));
    expect(c.regressions).toBe(0);
    expect(metric(c, 'all', 'p50').verdict).toBe('improved');
    expect(formatComparison(c)).toMatch(/verdict: no regression \(\d+ improved\)$/);
  });

  it('leaves a significant change within the tolerance ok, and follows the tolerances given', () => {
    const many = synthetic({ seed: 1, perSecond: 300 });
    const slightly = synthetic({ seed: 2, scale: 1.05, perSecond: 300 });
    const c = compareResults(many, slightly);
    expect(metric(c, 'all', 'p50')).toMatchObject({ significance: 'significant', verdict: 'ok' });
    expect(c.regressions).toBe(0);
    const strict = compareResults(many, slightly, { tolerances: { p50: 0.03 } });
    expect(metric(strict, 'all', 'p50').verdict).toBe('regression');
    const lenient = compareResults(baseline, synthetic({ seed: 2, scale: 1.5 }), {
      tolerances: parseTolerances('p50=100%,p95=100%,p99=100%'),
    });
    expect(lenient.regressions).toBe(0);
  });

  it('does not call one stalled second a regression: it is not sustained across the run', () => {
    const stalled = synthetic({ seed: 2, stall: { second: 7, ms: 300 } });
    const c = compareResults(baseline, stalled);
    const p99 = metric(c, 'all', 'p99');
    expect(p99.relative).toBeGreaterThan(10);
    expect(p99.interval?.lower).toBeGreaterThan(1);
    expect(p99).toMatchObject({ significance: 'not sustained', verdict: 'ok' });
    expect(c.regressions).toBe(0);
  });

  it('never calls a change significant on too few samples', () => {
    const few = (seed: number, scale = 1) => synthetic({ seed, scale, seconds: 5, perSecond: 5 });
    const c = compareResults(few(1), few(2, 3));
    expect(metric(c, 'all', 'p50').relative).toBeGreaterThan(1);
    for (const row of c.rows)
      for (const m of row.metrics) expect(m.significance, `${row.name} ${m.metric}`).toBe('too few samples');
    expect(c.regressions).toBe(0);
    // Enough requests, but the tail of p99 is a handful of samples (2000 * 1% = 20 is enough; 300 is not).
    const short = compareResults(
      synthetic({ seed: 1, perSecond: 15 }),
      synthetic({ seed: 2, perSecond: 15 }),
    );
    expect(metric(short, 'all', 'p95').significance).not.toBe('too few samples');
    expect(metric(short, 'all', 'p99').significance).toBe('too few samples');
  });

  it('flags errors and 429s rising beyond a point, as shares of requests', () => {
    const failing = synthetic({ seed: 2, errorShare: 0.05, rateLimitedShare: 0.1 });
    const c = compareResults(baseline, failing);
    expect(metric(c, 'all', 'errors')).toMatchObject({
      baseline: 0,
      significance: 'significant',
      verdict: 'regression',
    });
    expect(metric(c, 'all', 'errors').current).toBeCloseTo(0.05, 1);
    expect(metric(c, 'all', 'rate_limited').verdict).toBe('regression');
    expect(formatComparison(c)).toMatch(/all errors \+\d\.\d\dpt/);
    // 0.1% more errors: within the point a user would act on.
    const few = compareResults(
      synthetic({ seed: 1, errorShare: 0.001 }),
      synthetic({ seed: 2, errorShare: 0.002 }),
    );
    expect(metric(few, 'all', 'errors').verdict).toBe('ok');
  });

  it('judges slow runs too: a few requests a second are pooled, not dropped', () => {
    // Four requests a second for 10 s (a free plan against a real target runs at one).
    const slow = (seed: number, errorShare = 0) => synthetic({ seed, seconds: 10, perSecond: 4, errorShare });
    const broken = compareResults(slow(1), slow(2, 1));
    expect(metric(broken, 'all', 'errors')).toMatchObject({
      significance: 'significant',
      verdict: 'regression',
    });
    expect(metric(compareResults(slow(1), slow(2)), 'all', 'errors').verdict).toBe('ok');
  });

  it('flags a throughput 30% lower, not one operation the flow mix happened to call less', () => {
    const c = compareResults(baseline, synthetic({ seed: 2, perSecond: 70 }));
    expect(metric(c, 'all', 'rps')).toMatchObject({ significance: 'significant', verdict: 'regression' });
    expect(metric(c, 'all', 'rps').relative).toBeCloseTo(-0.3, 2);
    expect(compareResults(baseline, synthetic({ seed: 2, perSecond: 95 })).regressions).toBe(0);
  });

  it('gives the same verdict every time on the same files', () => {
    const other = synthetic({ seed: 2, scale: 1.1 });
    expect(compareResults(baseline, other)).toEqual(compareResults(baseline, other));
  });

  it('names how the runs were set up differently', () => {
    const other = { ...baseline, meta: { ...baseline.meta, scenario: 'other', partial: true } };
    expect(compareResults(baseline, other).differences).toEqual([
      'scenario (synthetic vs other)',
      'interrupted (current)',
    ]);
  });
});

describe('parseTolerances (--max-regression)', () => {
  it('reads metric=N% pairs over the defaults', () => {
    expect(parseTolerances(undefined)).toEqual(DEFAULT_TOLERANCES);
    expect(parseTolerances('p99=10%,p95=10%,rps=5%,errors=1%')).toEqual({
      ...DEFAULT_TOLERANCES,
      p99: 0.1,
      p95: 0.1,
      rps: 0.05,
      errors: 0.01,
    });
    expect(parseTolerances(' p50 = 2.5% , rate_limited=0%')).toMatchObject({ p50: 0.025, rate_limited: 0 });
  });

  it.each([
    ['p99=10', '--max-regression: p99=10: missing %, e.g. p99=10%'],
    ['p42=10%', "--max-regression: unknown metric 'p42' (known: p50, p95, p99, rps, errors, rate_limited)"],
    ['p99=-5%', '--max-regression: p99=-5%: a tolerance cannot be negative'],
    ['p99', "--max-regression: 'p99' is not metric=N% (e.g. p99=10%)"],
    ['p99=abc%', "--max-regression: p99=abc%: 'abc' is not a number"],
    ['p99=10%,p99=5%', '--max-regression: p99 is given twice'],
    ['p99=10%,', "--max-regression: '' is not metric=N% (e.g. p99=10%)"],
    ['', '--max-regression: empty; expected metric=N% pairs like p99=10%,rps=5%'],
  ])('refuses %j with a clear message', (text, message) => {
    expect(() => parseTolerances(text)).toThrow(new InputError(message));
  });
});

describe('petstore-load compare', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-load-compare-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  const args = (b: string, c: string, maxRegression?: string) => ({
    baseline: b,
    current: c,
    maxRegression,
    'max-regression': maxRegression,
    _: ['compare'],
    $0: 'petstore-load',
  });
  async function printed(run: () => Promise<number>): Promise<{ code: number; out: string }> {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const code = await run();
      return { code, out: log.mock.calls.map((c) => String(c[0])).join('\n') };
    } finally {
      log.mockRestore();
    }
  }

  it('exits 0 without a regression and 1 with one, printing the table and the verdict', async () => {
    const b = file('baseline.json', baseline);
    const same = await printed(() => compare(args(b, b)));
    expect(same.code).toBe(0);
    expect(same.out).toMatch(/^baseline .*baseline\.json: synthetic, /);
    expect(same.out).toMatch(/\nverdict: no regression$/);
    const slower = file('slower.json', synthetic({ seed: 2, scale: 1.5 }));
    const worse = await printed(() => compare(args(b, slower)));
    expect(worse.code).toBe(1);
    expect(worse.out).toMatch(/\nverdict: 9 regressions: /);
    const lenient = await printed(() => compare(args(b, slower, 'p50=100%,p95=100%,p99=100%')));
    expect(lenient.code).toBe(0);
  });

  it('refuses a malformed tolerance before reading any file, and names a bad file', async () => {
    await expect(compare(args('nowhere.json', 'nowhere.json', 'p99=10'))).rejects.toThrow(
      '--max-regression: p99=10: missing %, e.g. p99=10%',
    );
    const b = file('b.json', baseline);
    await expect(compare(args(b, join(dir, 'missing.json')))).rejects.toThrow(
      /^current .*missing\.json: no such file$/,
    );
    const v2 = file('v2.json', { ...baseline, schemaVersion: 2 });
    await expect(compare(args(v2, b))).rejects.toThrow(
      /^baseline .*v2\.json: schemaVersion 2; this petstore-load reads schemaVersion 1$/,
    );
  });

  it('compares a run just measured with a baseline file, for run --baseline', () => {
    const b = { file: file('run-baseline.json', baseline), result: baseline };
    const outcome = compareWithBaseline(b, synthetic({ seed: 2, scale: 1.5 }), 'p99=10%');
    expect(outcome.exitCode).toBe(1);
    expect(outcome.comparison.regressions).toBe(9);
    expect(outcome.text).toMatch(/^baseline .*run-baseline\.json: synthetic/);
    expect(() => compareWithBaseline(b, baseline, 'p99=ten%')).toThrow(/'ten' is not a number/);
    expect(compareWithBaseline(b, baseline).exitCode).toBe(0);
  });
});

describe('real runs against the reference server', () => {
  let a: RunResult;
  let b: RunResult;
  let slowed: RunResult;

  beforeAll(async () => {
    const scenario = await loadScenario('catalogue-browse');
    // Free at time scale 60: 48 iterations a second for 5 s, some 300 requests a run. The three run at
    // once, in one process: a run after another would meet a warmer JIT, a difference between runs
    // (the second some 15% faster at p50) that no statistic of a single run can see, and the
    // tolerances are there to absorb, not this test to race against. The target takes 10 ms, as a
    // service does: on loopback a request takes under a millisecond, where a neighbour on the 2 CI
    // cores moved one run's p50 by 25% (0.8 to 1.0 ms), a real and sustained difference between two
    // runs that the default 10% tolerance is not meant for.
    const run = (seed: number, latencyMs: number) =>
      runInProcess({
        scenario,
        server: { timeScale: 60, faults: { latencyMs } },
        overrides: { durationMs: 5000 },
        seed,
      }).then((outcome) => outcome.result);
    [a, b, slowed] = await Promise.all([run(1, 10), run(2, 10), run(3, 30)]);
  }, 40_000);

  it('does not call two runs of one scenario a regression, either way round', () => {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const c = compareResults(x, y);
      expect(regressions(c), formatComparison(c)).toEqual([]);
    }
  });

  it('calls a server 20 ms slower a regression', () => {
    const c = compareResults(a, slowed);
    expect(metric(c, 'all', 'p50'), formatComparison(c)).toMatchObject({
      significance: 'significant',
      verdict: 'regression',
    });
    expect(metric(c, 'all', 'p50').current - metric(c, 'all', 'p50').baseline).toBeGreaterThan(15);
    expect(c.regressions).toBeGreaterThan(0);
  });
});
