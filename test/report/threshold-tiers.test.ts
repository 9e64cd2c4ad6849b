import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/api/input-error.ts';
import { failsForGood } from '../../src/cli/thresholds.ts';
import { evaluateThreshold } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import type { RunResult } from '../../src/result/types.ts';
import { syntheticResult } from '../helpers/synthetic-result.ts';
import { spread, tenantMix, tenantResult } from '../result/tenant-fixture.ts';

const OPS = new Set(['listPets', 'plan']);
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

describe('threshold language: tenant tiers', () => {
  it('reads plan:<plan>: and group:<name>: before any metric a tier has', () => {
    expect(parse('plan:pro:p99<300ms')).toMatchObject({
      tier: { kind: 'plan', name: 'pro' },
      metric: 'p99',
      percentile: 99,
      kind: 'latency',
      value: 300,
    });
    expect(parse('plan:free:rate_limited<1%')).toMatchObject({
      tier: { kind: 'plan', name: 'free' },
      metric: 'rate_limited',
      kind: 'share',
      value: 1,
    });
    expect(parse('group:abusive:violations==0')).toMatchObject({
      tier: { kind: 'group', name: 'abusive' },
      metric: 'violations',
      kind: 'count',
    });
    expect(parse('plan:free:p(99.9) <= 1s')).toMatchObject({ metric: 'p99.9', value: 1000 });
    expect(parse('plan:free:quota_utilization>=80%').value).toBe(80);
    expect(parse('plan:free:quota_utilization_min>0.5').value).toBe(50);
    for (const m of ['avg<5', 'med<5', 'min<5', 'max<5', 'errors<1%', 'rps>1', 'requests>1'])
      expect(parse(`plan:pro:${m}`).tier).toEqual({ kind: 'plan', name: 'pro' });
    expect(parse('plan:free:p99<300ms').operation).toBeUndefined();
  });

  it('keeps the operation prefix as it was, even for an operation named like a tier', () => {
    expect(parse('listPets:p95<100ms')).toMatchObject({ operation: 'listPets', metric: 'p95' });
    expect(parse('plan:p95<100ms')).toMatchObject({ operation: 'plan', metric: 'p95' });
    expect(parse('listPets:p95<100ms').tier).toBeUndefined();
  });

  it('refuses what a tier has no figure for, and a tier-only figure without a tier, in one line', () => {
    expect(error('plan:pro:checks>99%')).toMatch(/'checks' has no figure per tier/);
    expect(error('plan:pro:dropped_iterations==0')).toMatch(/has no figure per tier/);
    expect(error('quota_utilization_min>50%')).toMatch(/write plan:<plan>:quota_utilization_min/);
    expect(error('listPets:quota_utilization_min>50%')).toMatch(/a figure of a tenant tier/);
    expect(error('plan:pro:bogus<1')).toMatch(/unknown metric 'bogus'/);
    expect(error('tier:pro:p99<1')).toMatch(/not of the form/);
    expect(error('plan:pro:rate_limited<2')).toMatch(/not a fraction/);
  });
});

describe('threshold verdicts on tenant tiers', () => {
  let result: RunResult;
  const mix = tenantMix();

  beforeAll(async () => {
    result = await tenantResult(mix, [
      // free#1 sends its whole quota (10 in 10 s), free#2 half; one 429 among free's 16.
      ...spread(['free#1'], 10, 0, 10_000, 10),
      ...spread(['free#2'], 5, 0, 10_000, 30),
      { tenant: 'free#3', at: 500, status: 429, retryAfter: 1 },
      ...spread(['pro#1'], 4, 0, 10_000, 100),
      { tenant: 'pro#2', at: 700, status: 503 },
      { tenant: 'abusive#1', at: 6000, status: 429, retryAfter: 1 },
      { tenant: 'abusive#1', at: 6100, status: 429, retryAfter: 1 },
    ]);
  });

  const judge = (text: string) => evaluateThreshold(parse(text), result);

  it('reads byPlan and byTenantGroup: latency, 429s, errors, rate, requests, violations, utilisation', () => {
    expect(judge('plan:free:requests==16')).toMatchObject({ passed: true, actual: 16 });
    expect(judge('plan:free:rps>=1.6')).toMatchObject({ passed: true, actual: 1.6 });
    expect(judge('plan:free:rate_limited<=6.25%')).toMatchObject({ passed: true, actual: 6.25 });
    expect(judge('plan:pro:errors<10%')).toMatchObject({ passed: false, actual: 20 });
    expect(judge('plan:pro:errors<10%').detail).toBe('plan pro errors was 20%, wanted < 10%');
    expect(judge('plan:pro:p50>=100ms').passed).toBe(true);
    // free#2's slowest: 30 ms and 0.4 of spread.
    expect(judge('plan:free:max<=30ms')).toMatchObject({ passed: false, actual: 30.4 });
    expect(judge('plan:free:p(97.5)<31ms').passed).toBe(true);
    expect(judge('group:abusive:violations==1')).toMatchObject({ passed: true, actual: 1 });
    expect(judge('group:abusive:rate_limited==100%').passed).toBe(true);
    // 15 admitted of 5 keys x 10 s x 1/s; the least-used key sent nothing.
    expect(judge('plan:free:quota_utilization==30%')).toMatchObject({ passed: true, actual: 30 });
    expect(judge('plan:free:quota_utilization_min>0%')).toMatchObject({ passed: false, actual: 0 });
  });

  it('fails a tier the mix does not have, or a run without a mix, in one line', async () => {
    const missing = judge('plan:enterprise:p99<300ms');
    expect(missing).toMatchObject({ passed: false, actual: null });
    expect(missing.detail).toBe('no plan enterprise in the tenant mix (byPlan: free, pro): cannot hold');
    expect(judge('group:nobody:errors<1%').detail).toBe(
      'no group nobody in the tenant mix (byTenantGroup: abusive, vip): cannot hold',
    );
    const plain = await syntheticResult([{ op: 'listPets', ms: 5 }]);
    const none = evaluateThreshold(parse('plan:free:p99<300ms'), plain);
    expect(none).toMatchObject({ passed: false, actual: null });
    expect(none.detail).toBe('plan free: the run had no tenant mix (tenants, --tenants): cannot hold');
  });

  it('judges a tier that sent nothing: counts are 0, shares and latency cannot hold', () => {
    expect(judge('group:vip:requests==0')).toMatchObject({ passed: true, actual: 0 });
    expect(judge('group:vip:p99<300ms')).toMatchObject({ passed: false, actual: null });
    expect(judge('group:vip:p99<300ms').detail).toBe('no requests for group vip: cannot hold');
  });

  it('does not abort a run on a tier that has not sent yet', () => {
    const t = parseThreshold('group:vip:rps>=1', 'cli', OPS, { abortOnFail: true });
    const verdict = evaluateThreshold(t, result);
    expect(verdict.passed).toBe(false);
    expect(failsForGood(t, verdict, result)).toBe(false);
    const free = parseThreshold('plan:free:rps>=5', 'cli', OPS, { abortOnFail: true });
    expect(failsForGood(free, evaluateThreshold(free, result), result)).toBe(true);
  });
});
