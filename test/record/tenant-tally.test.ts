import { describe, expect, it } from 'vitest';
import { Recorder } from '../../src/record/recorder.ts';
import { noisyStart } from '../../src/record/tenant-tally.ts';
import { FREE_WINDOWS, T0 } from '../helpers/unit-attempt.ts';
import { tenantAttempt, tenantMix, tenantRecorder } from '../result/tenant-fixture.ts';

const mix = tenantMix();

describe('TenantTally: attempts by tier', () => {
  it("counts a plan's unnamed groups as one tier and each named group apart", async () => {
    const recorder = await tenantRecorder(mix, [
      { tenant: 'free#1', at: 100 },
      { tenant: 'free#1', at: 200, status: 429, retryAfter: 1 },
      { tenant: 'free#4', at: 300 },
      { tenant: 'free#5', at: 400, status: 500 },
      { tenant: 'pro#2', at: 500 },
      { tenant: 'abusive#2', at: 6000, status: 429, retryAfter: 1 },
      { tenant: 'abusive#2', at: 6100, status: 429, retryAfter: 1 },
      { tenant: 'vip#1', at: 700, errorCode: 'ECONNRESET' },
    ]);
    const tally = recorder.tenants;
    expect([...(tally?.byPlan.keys() ?? [])].sort()).toEqual(['free', 'pro']);
    expect([...(tally?.byGroup.keys() ?? [])].sort()).toEqual(['abusive', 'vip']);
    const free = tally?.byPlan.get('free');
    expect(free).toMatchObject({
      plan: 'free',
      keys: 5,
      keysSeen: 3,
      enforce: true,
      requests: 4,
      duringWorkload: 4,
      rateLimited: 1,
      errors: 1,
      // 200, 200 and 500 (the limiter let it through): the 429 is not admitted.
      admitted: 3,
      planRatePerKey: 1,
      statuses: { 200: 2, 429: 1, 500: 1 },
    });
    // Ordinals continue across the plan's unnamed groups: free#4 and free#5 are slots 3 and 4.
    expect([...(free?.admittedPerKey ?? [])]).toEqual([1, 0, 0, 1, 1]);
    expect(tally?.byPlan.get('pro')).toMatchObject({ keys: 2, keysSeen: 1, requests: 1, planRatePerKey: 5 });
    expect([...(tally?.byPlan.get('pro')?.admittedPerKey ?? [])]).toEqual([0, 1]);
    // The abusive group's 429s and its violation stay out of the free tier.
    expect(tally?.byGroup.get('abusive')).toMatchObject({
      plan: 'free',
      keys: 2,
      enforce: false,
      requests: 2,
      rateLimited: 2,
      violations: 1,
      admitted: 0,
    });
    expect(tally?.byGroup.get('vip')).toMatchObject({ plan: 'pro', keys: 1, errors: 1, admitted: 0 });
    expect(free?.response.totalCount).toBe(4);
    expect(free?.violations).toBe(0);
  });

  it('counts setup and teardown requests, but not in the rate, the admitted or the stretches', async () => {
    const recorder = await tenantRecorder(mix, [{ tenant: 'free#2', at: 100 }], {
      setup: [{ tenant: 'free#2', at: 0 }],
    });
    const free = recorder.tenants?.byPlan.get('free');
    expect(free).toMatchObject({ requests: 2, duringWorkload: 1, admitted: 1, keysSeen: 1 });
    const stretch = recorder.tenants?.stretches.get('free');
    expect(stretch?.before.requests).toBe(1);
  });

  it('splits the compliant tenants at the noisy group’s start, by send time', async () => {
    const recorder = await tenantRecorder(mix, [
      { tenant: 'free#1', at: 4990, ms: 30 },
      { tenant: 'free#4', at: 5000, status: 429 },
      { tenant: 'pro#1', at: 7000, errorCode: 'ETIMEDOUT' },
      { tenant: 'abusive#1', at: 5500 },
      { tenant: 'vip#1', at: 100 },
    ]);
    const tally = recorder.tenants;
    expect(tally?.noisy).toEqual({ groups: ['abusive'], fromMs: 5000 });
    // Only plans with unnamed groups have stretches; named groups are not compliant tenants.
    expect([...(tally?.stretches.keys() ?? [])].sort()).toEqual(['free', 'pro']);
    const free = tally?.stretches.get('free');
    expect(free?.before).toMatchObject({ requests: 1, rateLimited: 0, errors: 0 });
    expect(free?.after).toMatchObject({ requests: 1, rateLimited: 1, errors: 0 });
    expect(tally?.stretches.get('pro')?.after).toMatchObject({ requests: 1, errors: 1 });
    expect(tally?.stretches.get('pro')?.before.requests).toBe(0);
  });

  it('finds the noisy neighbours: named raw-mode groups that start after the workload', () => {
    expect(noisyStart(mix)).toEqual({ groups: ['abusive'], fromMs: 5000 });
    const none = tenantMix([
      { plan: 'free', keys: 2 },
      { plan: 'free', keys: 1, name: 'early', enforce: false },
      { plan: 'free', keys: 1, name: 'paced', startTime: '2s' },
    ]);
    expect(noisyStart(none)).toBeUndefined();
    const two = tenantMix([
      { plan: 'free', keys: 2 },
      { plan: 'free', keys: 1, name: 'late', enforce: false, startTime: '8s' },
      { plan: 'free', keys: 1, name: 'sooner', enforce: false, startTime: 3000 },
    ]);
    expect(noisyStart(two)).toEqual({ groups: ['late', 'sooner'], fromMs: 3000 });
  });
});

describe('Recorder with a tenant mix', () => {
  it("checks each response against its tenant's own plan, not the run's", async () => {
    // The recorder's windows are free's (60/min); a pro tenant's Limit 300 is its plan's.
    const recorder = await tenantRecorder(mix, [
      { tenant: 'pro#1', at: 100 },
      { tenant: 'free#1', at: 200 },
    ]);
    const check = recorder.checks.snapshot().find((c) => c.id === 'ratelimit-limit-matches-plan');
    expect(check).toMatchObject({ passes: 2, failures: 0 });
  });

  it('keeps a quota series for the first key of each tier only', async () => {
    const recorder = await tenantRecorder(mix, [
      { tenant: 'free#1', at: 100 },
      { tenant: 'free#2', at: 200 },
      { tenant: 'free#4', at: 300 },
      { tenant: 'pro#1', at: 400 },
      { tenant: 'pro#2', at: 500 },
      { tenant: 'abusive#1', at: 5100 },
      { tenant: 'abusive#2', at: 5200 },
    ]);
    expect(
      recorder.quota
        .snapshot()
        .map((k) => k.key)
        .sort(),
    ).toEqual(['abusive#1', 'free#1', 'pro#1']);
  });

  it('records the same without a mix, the tenant ignored (a run without tenants)', async () => {
    const a = await tenantAttempt(mix, { tenant: 'free#3', at: 100 });
    const plain = new Recorder({ startedAt: T0, windows: FREE_WINDOWS, workloadOnly: true });
    plain.measure(true, T0);
    plain.record(a);
    expect(plain.tenants).toBeUndefined();
    expect(plain.overall.requests).toBe(1);
  });
});
