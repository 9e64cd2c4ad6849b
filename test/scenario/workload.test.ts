import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import type { Workload } from '../../src/scenario/define.ts';
import {
  DEFAULT_DURATION_MS,
  parseRate,
  resolveWorkload,
  type WorkloadOverrides,
} from '../../src/scenario/workload.ts';

/** The free plan's rate: 60 per minute. */
const PLAN_RATE = 1;

/** The InputError message `fn` throws; fails the test if it throws anything else or nothing. */
function inputError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    const message = (error as InputError).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected an InputError, nothing was thrown');
}

const resolve = (w: unknown, overrides?: WorkloadOverrides, planRate = PLAN_RATE) =>
  resolveWorkload(w as Workload, planRate, overrides);

describe('parseRate', () => {
  it('takes iterations per second or a share of the plan rate', () => {
    expect(parseRate(12, 4, 'rate')).toBe(12);
    expect(parseRate(0, 4, 'rate')).toBe(0);
    expect(parseRate('50%', 4, 'rate')).toBe(2);
    expect(parseRate('12.5%', 8, 'rate')).toBe(1);
    expect(parseRate('200%', 1, 'rate')).toBe(2);
  });
});

describe('resolveWorkload: executors', () => {
  it('constant-arrival-rate: an open model at a fixed rate', () => {
    const w = resolve({ executor: 'constant-arrival-rate', rate: '50%', duration: '15s' }, {}, 2);
    expect(w.kind).toBe('open');
    expect(w.executor).toBe('constant-arrival-rate');
    expect(w.durationMs).toBe(15_000);
    expect(w.rateAt(0)).toBe(1);
    expect(w.rateAt(14_999)).toBe(1);
    expect(w.vusAt(1000)).toBe(0);
    expect(w.maxInFlight).toBe(100);
    expect(w.iterations).toBeUndefined();
    expect(w.thinkMs).toEqual([0, 0]);
    expect(w.describe).toMatchObject({
      executor: 'constant-arrival-rate',
      rate: 1,
      durationMs: 15_000,
      maxInFlight: 100,
    });
  });

  it('constant-arrival-rate: a number rate, maxInFlight, iterations and the default duration', () => {
    const w = resolve({ executor: 'constant-arrival-rate', rate: 7, maxInFlight: 20, iterations: 50 });
    expect(w.rateAt(123)).toBe(7);
    expect(w.maxInFlight).toBe(20);
    expect(w.iterations).toBe(50);
    expect(w.durationMs).toBe(DEFAULT_DURATION_MS);
  });

  it('ramping-arrival-rate: linear between stage targets, held after the last', () => {
    const w = resolve({
      executor: 'ramping-arrival-rate',
      startRate: 2,
      stages: [
        { target: 10, duration: '10s' },
        { target: 10, duration: '5s' },
        { target: '0%', duration: 5000 },
      ],
    });
    expect(w.kind).toBe('open');
    expect(w.durationMs).toBe(20_000);
    const at = (ms: number) => w.rateAt(ms);
    expect(at(0)).toBe(2);
    expect(at(5_000)).toBe(6);
    expect(at(10_000)).toBe(10);
    expect(at(12_500)).toBe(10);
    expect(at(15_000)).toBe(10);
    expect(at(17_500)).toBe(5);
    expect(at(20_000)).toBe(0);
    expect(at(25_000)).toBe(0);
    expect(w.vusAt(5_000)).toBe(0);
    expect(w.describe).toMatchObject({
      startRate: 2,
      stages: [
        { target: 10, ms: 10_000 },
        { target: 10, ms: 5_000 },
        { target: 0, ms: 5_000 },
      ],
    });
  });

  it('ramping-arrival-rate: shares of the plan and a start rate of 0 by default', () => {
    const w = resolve(
      { executor: 'ramping-arrival-rate', stages: [{ target: '100%', duration: '4s' }] },
      {},
      5,
    );
    expect(w.rateAt(0)).toBe(0);
    expect(w.rateAt(2_000)).toBe(2.5);
    expect(w.rateAt(4_000)).toBe(5);
    const half = resolve(
      { executor: 'ramping-arrival-rate', startRate: '50%', stages: [{ target: '50%', duration: '1s' }] },
      {},
      5,
    );
    expect(half.rateAt(500)).toBe(2.5);
  });

  it('constant-vus: a closed model with think time', () => {
    const w = resolve({ executor: 'constant-vus', vus: 8, duration: '20s', thinkTime: ['0ms', '50ms'] });
    expect(w.kind).toBe('closed');
    expect(w.vusAt(0)).toBe(8);
    expect(w.vusAt(19_999)).toBe(8);
    expect(w.rateAt(0)).toBe(0);
    expect(w.maxInFlight).toBe(8);
    expect(w.durationMs).toBe(20_000);
    expect(w.thinkMs).toEqual([0, 50]);
    const fixed = resolve({ executor: 'constant-vus', vus: 2, thinkTime: '1.5s' });
    expect(fixed.thinkMs).toEqual([1500, 1500]);
    expect(fixed.durationMs).toBe(DEFAULT_DURATION_MS);
  });

  it('ramping-vus: linear between stage targets, maxInFlight the largest', () => {
    const w = resolve({
      executor: 'ramping-vus',
      startVUs: 2,
      stages: [
        { target: 10, duration: '4s' },
        { target: 0, duration: '2s' },
      ],
      thinkTime: 100,
    });
    expect(w.kind).toBe('closed');
    expect(w.durationMs).toBe(6_000);
    expect(w.maxInFlight).toBe(10);
    expect(w.vusAt(0)).toBe(2);
    expect(w.vusAt(2_000)).toBe(6);
    expect(w.vusAt(4_000)).toBe(10);
    expect(w.vusAt(5_000)).toBe(5);
    expect(w.vusAt(6_000)).toBe(0);
    expect(w.vusAt(60_000)).toBe(0);
    expect(w.thinkMs).toEqual([100, 100]);
    const down = resolve({ executor: 'ramping-vus', startVUs: 12, stages: [{ target: 3, duration: '1s' }] });
    expect(down.maxInFlight).toBe(12);
    expect(down.vusAt(0)).toBe(12);
  });
});

describe('resolveWorkload: overrides', () => {
  const vus: Workload = { executor: 'constant-vus', vus: 8, duration: '20s', thinkTime: ['10ms', '50ms'] };
  const ramp: Workload = {
    executor: 'ramping-arrival-rate',
    stages: [{ target: 10, duration: '10s' }],
    maxInFlight: 7,
    iterations: 40,
  };

  it('--rate turns any workload into constant-arrival-rate, keeping maxInFlight', () => {
    const w = resolve(ramp, { rate: 3 });
    expect(w.executor).toBe('constant-arrival-rate');
    expect(w.kind).toBe('open');
    expect(w.rateAt(0)).toBe(3);
    expect(w.rateAt(9_000)).toBe(3);
    expect(w.maxInFlight).toBe(7);
    const fromVus = resolve(vus, { rate: '150%' }, 2);
    expect(fromVus.executor).toBe('constant-arrival-rate');
    expect(fromVus.rateAt(0)).toBe(3);
    expect(fromVus.vusAt(0)).toBe(0);
  });

  it('--vus turns any workload into constant-vus, keeping the think time', () => {
    const w = resolve(ramp, { vus: 3 });
    expect(w.executor).toBe('constant-vus');
    expect(w.kind).toBe('closed');
    expect(w.vusAt(0)).toBe(3);
    expect(w.rateAt(0)).toBe(0);
    expect(w.maxInFlight).toBe(3);
    expect(resolve(vus, { vus: 2 }).thinkMs).toEqual([10, 50]);
  });

  it('a duration override replaces the declared duration or the sum of the stages', () => {
    expect(resolve(vus, { durationMs: 1234 }).durationMs).toBe(1234);
    expect(resolve(ramp, { durationMs: 2500 }).durationMs).toBe(2500);
    expect(
      resolve({ executor: 'ramping-vus', stages: [{ target: 1, duration: '9s' }] }, { durationMs: 100 })
        .durationMs,
    ).toBe(100);
    expect(resolve(vus, { rate: 5, durationMs: 4000 }).durationMs).toBe(4000);
  });

  it('an iterations override replaces the declared one', () => {
    expect(resolve(ramp).iterations).toBe(40);
    expect(resolve(ramp, { iterations: 7 }).iterations).toBe(7);
    expect(() => resolve(vus, { iterations: 0 })).toThrow('--iterations is 0');
  });

  // Regression: --rate and --vus once dropped the scenario's duration and iterations.
  it('--rate or --vus alone keeps the declared duration', () => {
    const burst: Workload = {
      executor: 'constant-arrival-rate',
      rate: '200%',
      duration: '15s',
      maxInFlight: 50,
    };
    expect(resolve(burst, { rate: 10 }).durationMs).toBe(15_000);
    expect(resolve(vus, { vus: 2 }).durationMs).toBe(20_000);
  });
});

describe('resolveWorkload: malformed input', () => {
  const cases: [string, unknown, RegExp, WorkloadOverrides?][] = [
    [
      'unknown executor',
      { executor: 'per-vu-iterations', vus: 1 },
      /workload.executor: 'per-vu-iterations' is none of constant-arrival-rate, ramping-arrival-rate, constant-vus, ramping-vus/,
    ],
    [
      'negative rate',
      { executor: 'constant-arrival-rate', rate: -1 },
      /^workload.rate: a rate must be a number >= 0 or a share like '100%'$/,
    ],
    [
      'infinite rate',
      { executor: 'constant-arrival-rate', rate: Number.POSITIVE_INFINITY },
      /^workload.rate: a rate must be/,
    ],
    [
      'NaN rate (--rate abc)',
      { executor: 'constant-vus', vus: 1 },
      /^workload.rate: a rate must be/,
      { rate: Number.NaN },
    ],
    [
      'rate without %',
      { executor: 'constant-arrival-rate', rate: '50' },
      /^workload.rate: '50' is not a rate \(a number of iterations per second, or '80%' of the plan\)$/,
    ],
    [
      'rate text',
      { executor: 'constant-arrival-rate', rate: 'fast' },
      /^workload.rate: 'fast' is not a rate/,
    ],
    [
      'negative share',
      { executor: 'constant-arrival-rate', rate: '-5%' },
      /^workload.rate: '-5%' is not a rate/,
    ],
    ['missing rate', { executor: 'constant-arrival-rate' }, /^workload.rate: 'undefined' is not a rate/],
    [
      'bad duration',
      { executor: 'constant-arrival-rate', rate: 1, duration: '30 seconds' },
      /^duration: '30 seconds' is not a duration/,
    ],
    [
      'negative duration',
      { executor: 'constant-vus', vus: 1, duration: -5 },
      /^duration: expected a non-negative duration, got -5$/,
    ],
    ['no stages', { executor: 'ramping-arrival-rate', stages: [] }, /^workload.stages: at least one stage$/],
    ['stages not a list', { executor: 'ramping-vus', stages: 'up' }, /^workload.stages: at least one stage$/],
    ['missing stages', { executor: 'ramping-vus' }, /^workload.stages: at least one stage$/],
    [
      'bad stage target',
      { executor: 'ramping-arrival-rate', stages: [{ target: 'lots', duration: '1s' }] },
      /^stages\[0\].target: 'lots' is not a rate/,
    ],
    [
      'bad stage duration',
      {
        executor: 'ramping-arrival-rate',
        stages: [
          { target: 1, duration: '1s' },
          { target: 1, duration: '1 min' },
        ],
      },
      /^stages\[1\].duration: '1 min' is not a duration/,
    ],
    [
      'bad start rate',
      { executor: 'ramping-arrival-rate', startRate: -2, stages: [{ target: 1, duration: '1s' }] },
      /^workload.startRate: a rate must be/,
    ],
    [
      'fractional VU target',
      { executor: 'ramping-vus', stages: [{ target: 1.5, duration: '1s' }] },
      /^stages\[0\].target must be a whole number >= 0$/,
    ],
    [
      'share as VU target',
      { executor: 'ramping-vus', stages: [{ target: '50%', duration: '1s' }] },
      /^stages\[0\].target must be a whole number >= 0$/,
    ],
    [
      'bad startVUs',
      { executor: 'ramping-vus', startVUs: -1, stages: [{ target: 1, duration: '1s' }] },
      /^workload.startVUs must be a whole number >= 0$/,
    ],
    ['fractional vus', { executor: 'constant-vus', vus: 2.5 }, /^workload.vus must be a whole number >= 0$/],
    ['missing vus', { executor: 'constant-vus' }, /^workload.vus must be a whole number >= 0$/],
    [
      'negative --vus',
      { executor: 'constant-arrival-rate', rate: 1 },
      /^workload.vus must be a whole number >= 0$/,
      { vus: -3 },
    ],
    [
      'bad iterations',
      { executor: 'constant-vus', vus: 1, iterations: 1.5 },
      /^workload.iterations must be a whole number >= 0$/,
    ],
    [
      'negative --iterations',
      { executor: 'constant-vus', vus: 1 },
      /^workload.iterations must be a whole number >= 0$/,
      { iterations: -1 },
    ],
    [
      'bad maxInFlight',
      { executor: 'constant-arrival-rate', rate: 1, maxInFlight: 'ten' },
      /^maxInFlight must be a whole number >= 0$/,
    ],
    [
      'bad think time',
      { executor: 'constant-vus', vus: 1, thinkTime: 'a while' },
      /^thinkTime: 'a while' is not a duration/,
    ],
    [
      'think range reversed',
      { executor: 'constant-vus', vus: 1, thinkTime: ['50ms', '10ms'] },
      /^thinkTime: the range must be \[min, max\]$/,
    ],
  ];
  for (const [name, workload, message, overrides] of cases) {
    it(`rejects ${name}`, () => {
      expect(inputError(() => resolve(workload, overrides))).toMatch(message);
    });
  }

  // Regression: a missing duration once crashed with a TypeError instead of an InputError.
  it('rejects a stage without a duration with an InputError', () => {
    inputError(() => resolve({ executor: 'ramping-arrival-rate', stages: [{ target: 5 }] }));
  });
  it('rejects a one-element thinkTime range with an InputError', () => {
    inputError(() => resolve({ executor: 'constant-vus', vus: 1, thinkTime: ['10ms'] }));
  });
  it('rejects duration: null with an InputError', () => {
    inputError(() => resolve({ executor: 'constant-vus', vus: 1, duration: null }));
  });
});

describe('resolveWorkload: a workload of size zero is an error', () => {
  it.each([
    [
      { executor: 'constant-vus', vus: 0, duration: '5s' },
      {},
      'workload.vus is 0: a run needs at least one virtual user',
    ],
    [
      { executor: 'constant-vus', vus: 2, duration: '5s' },
      { vus: 0 },
      '--vus is 0: a run needs at least one virtual user',
    ],
    [
      { executor: 'constant-arrival-rate', rate: 0, duration: '5s' },
      {},
      'workload.rate is 0: a run needs an arrival rate above 0',
    ],
    [{ executor: 'constant-arrival-rate', rate: '0%', duration: '5s' }, {}, 'workload.rate is 0'],
    [
      { executor: 'constant-vus', vus: 2, duration: '5s' },
      { rate: 0 },
      '--rate is 0: a run needs an arrival rate above 0',
    ],
    [{ executor: 'constant-vus', vus: 2, duration: '5s' }, { rate: '0%' }, '--rate is 0'],
    [
      { executor: 'constant-vus', vus: 2, duration: '5s', iterations: 0 },
      {},
      'workload.iterations is 0: a run needs at least one iteration',
    ],
    [{ executor: 'constant-vus', vus: 2, duration: '5s' }, { iterations: 0 }, '--iterations is 0'],
    [
      { executor: 'constant-vus', vus: 2, duration: '0s' },
      {},
      'workload.duration is 0: a run needs a duration above 0',
    ],
    [{ executor: 'constant-vus', vus: 2, duration: '5s' }, { durationMs: 0 }, '--duration is 0'],
    [{ executor: 'ramping-vus', stages: [{ target: 0, duration: '5s' }] }, {}, 'workload.stages is 0'],
    [{ executor: 'ramping-vus', stages: [{ target: 0, duration: '0s' }] }, {}, 'workload.duration is 0'],
    [
      {
        executor: 'ramping-arrival-rate',
        stages: [
          { target: 0, duration: '5s' },
          { target: 0, duration: '5s' },
        ],
      },
      {},
      'workload.stages is 0',
    ],
  ] as [Workload, WorkloadOverrides, string][])('%j with %j: %s', (workload, overrides, message) => {
    expect(() => resolveWorkload(workload, PLAN_RATE, overrides)).toThrow(InputError);
    expect(() => resolveWorkload(workload, PLAN_RATE, overrides)).toThrow(message);
  });

  it('a ramp that starts or ends at 0 but rises between is a workload', () => {
    const up: Workload = {
      executor: 'ramping-vus',
      stages: [
        { target: 2, duration: '1s' },
        { target: 0, duration: '1s' },
      ],
    };
    expect(resolveWorkload(up, PLAN_RATE).vusAt(1000)).toBe(2);
    const rate: Workload = {
      executor: 'ramping-arrival-rate',
      startRate: 0,
      stages: [{ target: 5, duration: '1s' }],
    };
    expect(resolveWorkload(rate, PLAN_RATE).rateAt(1000)).toBe(5);
  });
});
