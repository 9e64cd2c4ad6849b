import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { evaluateThreshold, evaluateThresholds } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import type { RunResult } from '../../src/result/types.ts';
import { ladder, syntheticResult } from '../helpers/synthetic-result.ts';

const OPS = new Set(['listPets', 'listCategories', 'getPetById']);
const parse = (text: string) => parseThreshold(text, 'cli', OPS);
const error = (text: string) => {
  try {
    parse(text);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  return undefined;
};

describe('threshold language', () => {
  it('reads latency percentiles overall and per operation, in ms, s or us', () => {
    expect(parse('p99<300ms')).toMatchObject({
      metric: 'p99',
      percentile: 99,
      comparator: '<',
      value: 300,
      kind: 'latency',
    });
    expect(parse('listPets:p95<100ms')).toMatchObject({ operation: 'listPets', metric: 'p95', value: 100 });
    expect(parse('p(99.9) <= 1.5s')).toMatchObject({ metric: 'p99.9', comparator: '<=', value: 1500 });
    expect(parse('p90<250us').value).toBeCloseTo(0.25);
    // A bare number is milliseconds, as in k6.
    expect(parse('avg<20')).toMatchObject({ metric: 'avg', value: 20 });
    expect(parse('max<1s').value).toBe(1000);
  });

  it('reads shares as percent or fraction, rates, counts and run-wide figures', () => {
    expect(parse('rate_limited<1%')).toMatchObject({ kind: 'share', value: 1 });
    expect(parse('errors<0.005').value).toBeCloseTo(0.5);
    expect(parse('checks>=100%')).toMatchObject({ comparator: '>=', value: 100 });
    expect(parse('rps>=50')).toMatchObject({ kind: 'rate', value: 50 });
    expect(parse('quota_utilization>=95%').value).toBe(95);
    expect(parse('violations==0')).toMatchObject({ kind: 'count', comparator: '==', value: 0 });
    expect(parse('dropped_iterations==0').metric).toBe('dropped_iterations');
    expect(parse(' listCategories:errors != 5% ')).toMatchObject({
      expression: 'listCategories:errors != 5%',
    });
  });

  it('refuses malformed expressions with one line that says what is wrong', () => {
    expect(error('p99')).toMatch(/not of the form/);
    expect(error('p99 300ms')).toMatch(/not of the form/);
    expect(error('latency<300ms')).toMatch(/unknown metric 'latency'/);
    expect(error('p99<300kg')).toMatch(/unit 'kg' is not a duration/);
    expect(error('p99<fast')).toMatch(/not a number/);
    expect(error('p101<3ms')).toMatch(/percentile '101'/);
    expect(error('p0<3ms')).toMatch(/percentile '0'/);
    expect(error('errors<5')).toMatch(/not a fraction/);
    expect(error('errors<5ms')).toMatch(/not a share/);
    expect(error('violations==0%')).toMatch(/count takes no unit/);
    expect(error('rps>=5ms')).toMatch(/not a rate/);
    expect(error('nosuchOp:p99<3ms')).toMatch(/no operation 'nosuchOp'/);
    expect(error('listPets:violations==0')).toMatch(/whole run/);
    expect(error('p99<-3ms')).toMatch(/not a number|negative/);
    expect(error('p99=<3ms')).toMatch(/not of the form|not a number/);
    // Names of Object.prototype are not metrics.
    expect(error('constructor<1')).toMatch(/unknown metric 'constructor'/);
    expect(error('__proto__>=0')).toMatch(/unknown metric '__proto__'/);
  });
});

describe('threshold evaluation', () => {
  let result: RunResult;
  beforeAll(async () => {
    // listPets: 100 responses of 1..100 ms; listCategories: 18 ok, one 500, one 429, one timeout.
    result = await syntheticResult([
      ...ladder('listPets', 100),
      ...ladder('listCategories', 18),
      { op: 'listCategories', ms: 5, status: 500 },
      { op: 'listCategories', ms: 5, status: 429 },
      { op: 'listCategories', ms: 5, errorCode: 'UND_ERR_HEADERS_TIMEOUT' },
    ]);
  });
  const judge = (text: string) => evaluateThreshold(parse(text), result);

  it('judges latency on response time, overall and per operation, at stored and other percentiles', () => {
    expect(judge('listPets:p99<100ms')).toMatchObject({ passed: true });
    expect(judge('listPets:p50<=50.1ms').passed).toBe(true);
    expect(judge('listPets:p50<49ms')).toMatchObject({ passed: false });
    expect(judge('listPets:p50<49ms').detail).toMatch(/listPets p50 was 50(\.\d+)? ms, wanted < 49 ms/);
    // p97 is not among the stored percentiles: read from the encoded histogram.
    const p97 = judge('listPets:p97<97.2ms');
    expect(p97.passed).toBe(true);
    expect(p97.actual).toBeCloseTo(97, 0);
    expect(judge('listPets:p97<96ms').passed).toBe(false);
    expect(judge('listPets:max<=100.1ms').passed).toBe(true);
    expect(judge('p99<50ms').passed).toBe(false);
  });

  it('judges errors, 429s, checks, rps and counts as shares of requests', () => {
    // listCategories: 21 requests, 2 errors (a 500 and a timeout), one 429.
    expect(judge('listCategories:errors<10%').actual).toBeCloseTo((2 / 21) * 100, 2);
    expect(judge('listCategories:errors<9%').passed).toBe(false);
    expect(judge('listCategories:rate_limited<=4.77%').passed).toBe(true);
    expect(judge('listCategories:rate_limited<4.7%').passed).toBe(false);
    expect(judge('listPets:errors==0').passed).toBe(true);
    expect(judge('listPets:checks>=100%')).toMatchObject({ passed: true, actual: 100 });
    expect(judge('requests==121').passed).toBe(true);
    expect(judge('rps>=12').actual).toBeCloseTo(12.1, 5);
    expect(judge('violations==0').passed).toBe(true);
    expect(judge('dropped_iterations==0').passed).toBe(true);
    // 119 admitted in 10 s against the free plan's 1 per second: 10 intervals and the first request.
    expect(judge('quota_utilization>=1000%')).toMatchObject({ passed: true });
    expect(judge('quota_utilization>=1000%').actual).toBeCloseTo((119 / 11) * 100, 2);
    expect(judge('quota_utilization<1000%').passed).toBe(false);
  });

  it('holds a share exactly at its bound (7 in 100 is 7%, not 7.000000000000001%)', async () => {
    const seven = await syntheticResult([
      ...ladder('listPets', 93),
      ...Array.from({ length: 7 }, () => ({ op: 'listPets', ms: 2, status: 500 })),
    ]);
    expect(evaluateThreshold(parse('errors<=7%'), seven).passed).toBe(true);
    expect(evaluateThreshold(parse('errors==7%'), seven).passed).toBe(true);
    expect(evaluateThreshold(parse('errors<7%'), seven).passed).toBe(false);
  });

  it('never reads a percentile above the largest sample', async () => {
    const flat = await syntheticResult(Array.from({ length: 50 }, () => ({ op: 'listPets', ms: 1100 })));
    expect(evaluateThreshold(parse('p99<=1.1s'), flat).passed).toBe(true);
    expect(evaluateThreshold(parse('p97<=1.1s'), flat).passed).toBe(true);
  });

  it('fails a threshold with nothing to measure, saying why', () => {
    const verdict = judge('getPetById:p99<100ms');
    expect(verdict).toMatchObject({ passed: false, actual: null });
    expect(verdict.detail).toMatch(/no requests for getPetById/);
    expect(judge('getPetById:requests==0').passed).toBe(true);
  });

  it('keeps order and source, and says nothing more of a threshold that passed', () => {
    const verdicts = evaluateThresholds(
      [parse('p99<1s'), parseThreshold('errors<1%', 'scenario', OPS)],
      result,
    );
    expect(verdicts.map((v) => [v.expression, v.source, v.passed])).toEqual([
      ['p99<1s', 'cli', true],
      ['errors<1%', 'scenario', false],
    ]);
    expect(verdicts[0]?.detail).toBeUndefined();
  });
});
