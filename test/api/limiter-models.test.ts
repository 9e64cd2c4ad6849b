import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Admission,
  createLimiterModel,
  FixedWindow,
  Gcra,
  LIMITER_MODELS,
  type LimiterModel,
  SlidingCounter,
  SlidingLog,
  TokenBucket,
} from '../../src/api/limiter-models.ts';

/** Every time is an injected clock reading: the arithmetic is checked exactly, nothing sleeps. */
function run(model: LimiterModel, times: number[], key = 'k'): (Admission & { at: number })[] {
  return times.map((at) => ({ at, ...model.admit(key, at) }));
}

const statuses = (decisions: Admission[]) => decisions.map((d) => (d.allowed ? 200 : 429));

describe('fixed window', () => {
  it('admits the limit in a window that starts with its first request, then refuses until it ends', () => {
    const model = new FixedWindow(3, 1000);
    const d = run(model, [100, 100, 600, 700, 1099, 1100]);
    expect(statuses(d)).toEqual([200, 200, 200, 429, 429, 200]);
    expect(d.map((x) => x.remaining)).toEqual([2, 1, 0, 0, 0, 2]);
    expect(d.map((x) => x.resetMs)).toEqual([1000, 1000, 500, 400, 1, 1000]);
    expect(d.map((x) => x.retryAfterMs)).toEqual([0, 0, 500, 400, 1, 0]);
  });
});

describe('sliding log', () => {
  it('admits at most the limit in any span of the window; each request comes back as it ages out', () => {
    const model = new SlidingLog(3, 1000);
    const d = run(model, [0, 400, 800, 900, 999, 1000, 1000, 1400, 1800]);
    expect(statuses(d)).toEqual([200, 200, 200, 429, 429, 200, 429, 200, 200]);
    expect(d.map((x) => x.remaining)).toEqual([2, 1, 0, 0, 0, 0, 0, 0, 0]);
    // Reset: when the newest request ages out and the whole quota is back.
    expect(d.map((x) => x.resetMs)).toEqual([1000, 1000, 1000, 900, 801, 1000, 1000, 1000, 1000]);
    // Retry-After: when the oldest ages out and one request is admitted.
    expect(d.map((x) => x.retryAfterMs)).toEqual([0, 0, 200, 100, 1, 400, 400, 400, 200]);
  });

  it('a peek at a later time forgets nothing that still counts for an earlier one', () => {
    const model = new SlidingLog(2, 1000);
    run(model, [0, 10]);
    expect(model.peek('k', 5000).remaining).toBe(1);
    expect(model.admit('k', 500).allowed).toBe(false);
  });
});

describe('sliding log that counts refused requests', () => {
  it('a refusal stays in the log a window: Retry-After is when enough counted requests have aged out', () => {
    const model = new SlidingLog(3, 1000, true);
    const d = run(model, [0, 100, 200, 300, 1001, 1150, 1300, 2300]);
    // 300 is refused and counted; at 1001 only 0 has aged out (100, 200, 300 remain): refused, and
    // counted too; at 1150 100 has aged out, 200, 300, 1001 remain: refused again.
    expect(statuses(d)).toEqual([200, 200, 200, 429, 429, 429, 200, 200]);
    expect(d.map((x) => x.remaining)).toEqual([2, 1, 0, 0, 0, 0, 0, 2]);
    // Reset: the newest counted request, refused or not, ages out a window after it.
    expect(d.map((x) => x.resetMs)).toEqual([1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]);
    // Retry-After: at 300 four are counted, two must age out (100's ages out at 1100); at 1300 the
    // log holds 1001, 1150 and 1300 (admitted, so 1001's ageing out is when the next gets in).
    expect(d.map((x) => x.retryAfterMs)).toEqual([0, 0, 800, 800, 199, 150, 701, 0]);
  });

  it('a client that knocks more often than the window never gets in; one that waits its Retry-After does', () => {
    const knocking = new SlidingLog(2, 1000, true);
    run(knocking, [0, 0]);
    const knocks = run(
      knocking,
      Array.from({ length: 30 }, (_, i) => 100 + i * 300),
    );
    expect(knocks.every((k) => !k.allowed)).toBe(true);
    const waiting = new SlidingLog(2, 1000, true);
    let at = 0;
    for (let i = 0; i < 20; i++) {
      const a = waiting.admit('k', at);
      if (!a.allowed) expect(waiting.admit('k', at + a.retryAfterMs).allowed).toBe(true);
      at += a.allowed ? 100 : a.retryAfterMs;
    }
  });

  it('only the sliding log counts refusals', () => {
    expect(() => createLimiterModel('fixed', { limit: 1, windowMs: 1, countRefused: true })).toThrow(
      /sliding/,
    );
    expect(createLimiterModel('sliding', { limit: 1, windowMs: 1000, countRefused: true })).toMatchObject({
      countRefused: true,
    });
  });
});

describe('gcra (nginx limit_req, nodelay)', () => {
  it('burst 0: one request per emission interval T = W/L, the second at once is refused', () => {
    // 10 per 1000 ms: T = 100 ms.
    const model = new Gcra(10, 1000);
    expect(model.capacity).toBe(1);
    const d = run(model, [0, 0, 50, 99, 100, 150, 160, 200, 1000]);
    expect(statuses(d)).toEqual([200, 429, 429, 429, 200, 429, 429, 200, 200]);
    expect(d.every((x) => x.remaining === 0)).toBe(true);
    expect(d.map((x) => x.resetMs)).toEqual([100, 100, 50, 1, 100, 50, 40, 100, 100]);
    expect(d.map((x) => x.retryAfterMs)).toEqual([100, 100, 50, 1, 100, 50, 40, 100, 100]);
  });

  it('burst N: N + 1 at once, then one per T; Reset is when the bucket has drained', () => {
    const model = new Gcra(10, 1000, 3);
    const d = run(model, [0, 0, 0, 0, 0, 100, 100, 250]);
    expect(statuses(d)).toEqual([200, 200, 200, 200, 429, 200, 429, 200]);
    expect(d.map((x) => x.remaining)).toEqual([3, 2, 1, 0, 0, 0, 0, 0]);
    expect(d.map((x) => x.resetMs)).toEqual([100, 200, 300, 400, 400, 400, 400, 350]);
    expect(d.map((x) => x.retryAfterMs)).toEqual([0, 0, 0, 100, 100, 100, 100, 50]);
    // Idle for the whole burst: the whole burst is back.
    expect(model.peek('k', 600).remaining).toBe(3);
  });

  it('rejected requests do not count (as nginx)', () => {
    const model = new Gcra(10, 1000);
    run(model, [0, ...Array<number>(50).fill(1)]);
    expect(model.admit('k', 100).allowed).toBe(true);
  });
});

describe('token bucket', () => {
  it('a bucket of B admits B at once, then a token every T; Remaining counts whole tokens', () => {
    const model = new TokenBucket(10, 1000, 5);
    expect(model.capacity).toBe(5);
    const d = run(model, [0, 0, 0, 0, 0, 0, 250, 250, 250]);
    expect(statuses(d)).toEqual([200, 200, 200, 200, 200, 429, 200, 200, 429]);
    expect(d.map((x) => x.remaining)).toEqual([4, 3, 2, 1, 0, 0, 1, 0, 0]);
    // Reset: until the bucket is full again; Retry-After: until the next whole token.
    expect(d.map((x) => x.resetMs)).toEqual([100, 200, 300, 400, 500, 500, 350, 450, 450]);
    expect(d.map((x) => x.retryAfterMs)).toEqual([0, 0, 0, 0, 100, 100, 0, 50, 50]);
  });

  it('holds the window limit by default', () => {
    const model = createLimiterModel('token-bucket', { limit: 4, windowMs: 1000 });
    expect(statuses(run(model, [0, 0, 0, 0, 0]))).toEqual([200, 200, 200, 200, 429]);
  });
});

describe('every model', () => {
  it('keeps keys apart, and a peek counts nothing', () => {
    for (const name of LIMITER_MODELS) {
      const model = createLimiterModel(name, { limit: 1, windowMs: 1000 });
      expect(model.peek('a', 0).allowed).toBe(true);
      expect(model.admit('a', 0).allowed, name).toBe(true);
      expect(model.admit('a', 0).allowed, name).toBe(false);
      expect(model.admit('b', 0).allowed, name).toBe(true);
    }
  });

  it('refuses a burst for the models without one, and impossible settings', () => {
    expect(() => createLimiterModel('fixed', { limit: 1, windowMs: 1, burst: 2 })).toThrow(/burst/);
    expect(() => createLimiterModel('sliding', { limit: 1, windowMs: 1, burst: 2 })).toThrow(/burst/);
    expect(() => new TokenBucket(1, 1000, 0)).toThrow(/capacity/);
    expect(() => new Gcra(1, 1000, -1)).toThrow(/burst/);
    expect(() => new SlidingLog(0, 1000)).toThrow(/limit/);
    expect(() => new FixedWindow(1, 0)).toThrow(/windowMs/);
  });
});

describe('sliding counter', () => {
  it("weighs the previous period's count by how much of it the window still covers", () => {
    // 4 per 1000 ms, periods aligned to the clock: [0, 1000), [1000, 2000), ...
    const model = new SlidingCounter(4, 1000);
    const d = run(model, [100, 200, 300, 900, 950, 1000, 1250, 1500, 1500, 1760]);
    // At 1000 the estimate is 4 (the previous period whole): refused. At 1250, 4 * 0.75 = 3: admitted,
    // and then 4; at 1500, 4 * 0.5 + 1 = 3: admitted once, then 4; at 1760, 4 * 0.24 + 2 = 2.96.
    expect(statuses(d)).toEqual([200, 200, 200, 200, 429, 429, 200, 200, 429, 200]);
    // After the request at 1760 the estimate is 3.96: one more is admitted now, and none after it.
    expect(d.map((x) => x.remaining)).toEqual([3, 2, 1, 0, 0, 0, 0, 0, 0, 1]);
    // Refused at 950 with 4 in the period: the estimate falls below 4 just after the next begins.
    expect(d[4]?.retryAfterMs).toBeCloseTo(50, 2);
    // Refused at 1500 (4 * 0.5 + 2 = 4): below 4 once the previous period's weight has fallen a hair.
    expect(d[8]?.retryAfterMs).toBeCloseTo(0, 2);
    expect(d[8]?.retryAfterMs).toBeGreaterThan(0);
    // The whole quota back once the newest counted request's period has been a whole window past.
    expect(d[3]?.resetMs).toBe(1100);
    expect(d[9]?.resetMs).toBe(1240);
  });

  it('counting refusals, a client that keeps knocking keeps the estimate up; one that waits gets in', () => {
    const knocking = new SlidingCounter(2, 1000, true);
    // 0, 10 admitted; 500 refused and counted (3 in the period); at 1200 the estimate is 3 * 0.8 = 2.4,
    // refused and counted; at 1600, 3 * 0.4 + 1 = 2.2.
    expect(statuses(run(knocking, [0, 10, 500, 1200, 1600]))).toEqual([200, 200, 429, 429, 429]);
    // Not counting refusals, or not knocking: 2 * 0.4 = 0.8 at 1600.
    expect(statuses(run(new SlidingCounter(2, 1000), [0, 10, 500, 1200, 1600]))).toEqual([
      200, 200, 429, 200, 200,
    ]);
    expect(statuses(run(new SlidingCounter(2, 1000, true), [0, 10, 500, 1600]))).toEqual([
      200, 200, 429, 200,
    ]);
  });

  it('admits the plan rate, evenly spaced, for ever', () => {
    const model = new SlidingCounter(10, 10_000);
    const times = Array.from({ length: 100 }, (_, i) => 50 + i * 1000);
    expect(statuses(run(model, times)).every((s) => s === 200)).toBe(true);
  });
});

// Arrival sequences: sorted integer times from gaps, so that they look like traffic (bursts, pauses).
const arrivals = (maxGap: number) =>
  fc.array(fc.nat({ max: maxGap }), { minLength: 1, maxLength: 120 }).map((gaps) => {
    let at = 0;
    return gaps.map((gap) => (at += gap));
  });
const settings = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.integer({ min: 1, max: 2000 }),
});
const TOLERANCE = 1e-6;

function admittedTimes(model: LimiterModel, times: number[]) {
  const decided = run(model, times);
  return { decided, admitted: decided.filter((d) => d.allowed).map((d) => d.at) };
}

describe('properties, for every arrival sequence', () => {
  it('sliding: never more than L in any span of W, and a refusal only when L are in the span', () => {
    fc.assert(
      fc.property(settings, arrivals(400), ({ limit, windowMs }, times) => {
        const { decided, admitted } = admittedTimes(new SlidingLog(limit, windowMs), times);
        for (let i = 0; i + limit < admitted.length; i++)
          expect((admitted[i + limit] as number) - (admitted[i] as number)).toBeGreaterThanOrEqual(windowMs);
        for (const d of decided.filter((x) => !x.allowed)) {
          const inSpan = admitted.filter((t) => t > d.at - windowMs && t <= d.at).length;
          expect(inSpan).toBe(limit);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('sliding counting refusals: never more than L counted in any span of W, and Retry-After is exact', () => {
    fc.assert(
      fc.property(settings, arrivals(400), ({ limit, windowMs }, times) => {
        const model = new SlidingLog(limit, windowMs, true);
        const decided = run(model, times);
        for (const d of decided) {
          // Every request counts: admitted only when fewer than L came in the span before it.
          const before = times.filter((t, i) => t > d.at - windowMs && i < decided.indexOf(d)).length;
          expect(d.allowed).toBe(before < limit);
          if (d.allowed) continue;
          // Nothing more sent: the peek at Retry-After admits, a ms sooner refuses.
          const probe = new SlidingLog(limit, windowMs, true);
          for (const t of times.slice(0, decided.indexOf(d) + 1)) probe.admit('k', t);
          expect(probe.peek('k', d.at + d.retryAfterMs).allowed).toBe(true);
          if (d.retryAfterMs >= 1) expect(probe.peek('k', d.at + d.retryAfterMs - 1).allowed).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('sliding counter: admitted exactly while the weighted count of what it counted is below L', () => {
    fc.assert(
      fc.property(settings, fc.boolean(), arrivals(400), ({ limit, windowMs }, countRefused, times) => {
        const decided = run(new SlidingCounter(limit, windowMs, countRefused), times);
        const counted: number[] = [];
        for (const d of decided) {
          const period = Math.floor(d.at / windowMs);
          const inPeriod = (p: number) => counted.filter((t) => Math.floor(t / windowMs) === p).length;
          const weight = 1 - (d.at - period * windowMs) / windowMs;
          const estimate = inPeriod(period - 1) * weight + inPeriod(period);
          // Within a millionth of the limit, either answer is the model's to give.
          if (Math.abs(estimate - limit) > 1e-5) expect(d.allowed).toBe(estimate < limit);
          if (d.allowed || countRefused) counted.push(d.at);
          if (!countRefused) expect(inPeriod(period)).toBeLessThanOrEqual(limit);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gcra burst 0: never two admitted closer than T, and a refusal only within T of the last', () => {
    fc.assert(
      fc.property(settings, arrivals(400), ({ limit, windowMs }, times) => {
        const model = new Gcra(limit, windowMs);
        const { decided, admitted } = admittedTimes(model, times);
        for (let i = 1; i < admitted.length; i++)
          expect((admitted[i] as number) - (admitted[i - 1] as number)).toBeGreaterThanOrEqual(
            model.intervalMs * (1 - TOLERANCE),
          );
        for (const d of decided.filter((x) => !x.allowed)) {
          const last = Math.max(...admitted.filter((t) => t <= d.at));
          expect(d.at - last).toBeLessThan(model.intervalMs);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('token bucket and gcra: never more than B + t/T in any interval t, and refused only when one more would be', () => {
    const bucket = fc.integer({ min: 1, max: 6 });
    fc.assert(
      fc.property(settings, bucket, fc.boolean(), arrivals(300), ({ limit, windowMs }, size, gcra, times) => {
        const model = gcra ? new Gcra(limit, windowMs, size - 1) : new TokenBucket(limit, windowMs, size);
        const T = windowMs / limit;
        const { decided, admitted } = admittedTimes(model, times);
        const bound = (from: number, to: number) => size + (to - from) / T + TOLERANCE;
        for (let i = 0; i < admitted.length; i++)
          for (let j = i; j < admitted.length; j++)
            expect(j - i + 1).toBeLessThanOrEqual(bound(admitted[i] as number, admitted[j] as number));
        for (const [n, d] of decided.entries()) {
          if (d.allowed) continue;
          const before = decided
            .slice(0, n)
            .filter((x) => x.allowed)
            .map((x) => x.at);
          const tight = before.some((t, i) => before.length - i + 1 > bound(t, d.at) - 2 * TOLERANCE);
          expect(tight).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the figures keep their promises: Retry-After admits, Reset restores the whole quota', () => {
    const name = fc.constantFrom(...LIMITER_MODELS);
    fc.assert(
      fc.property(name, settings, arrivals(300), (model, { limit, windowMs }, times) => {
        const m = createLimiterModel(model, { limit, windowMs });
        // Each decision against the state it left, before the next request changes it.
        for (const at of times) {
          const d = m.admit('k', at);
          expect(d.remaining).toBeGreaterThanOrEqual(0);
          expect(d.remaining).toBeLessThan(m.capacity);
          expect(m.peek('k', at).remaining).toBe(Math.max(0, d.remaining - 1));
          if (d.retryAfterMs > 0) {
            expect(m.peek('k', at + d.retryAfterMs / 2).allowed).toBe(false);
            expect(m.peek('k', at + d.retryAfterMs).allowed).toBe(true);
          } else {
            expect(m.peek('k', at).allowed).toBe(true);
          }
          expect(m.peek('k', at + d.resetMs).remaining).toBe(m.capacity - 1);
        }
      }),
      { numRuns: 300 },
    );
  });
});
