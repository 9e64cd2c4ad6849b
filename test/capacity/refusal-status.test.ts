import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type Plan } from '../../src/api/plans.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { type ProbeRun, probeSimulated } from '../helpers/capacity-cases.ts';

/**
 * `capacity` against a limiter that refuses with a bare 403 (no rate-limit field, no Retry-After:
 * HAProxy's `http-request deny`, several framework limiters by default), in simulated time. Told
 * nothing, a 403 is an authorization failure and no limit is seen; named with `--refusal-status
 * 403`, it is probed as a 429 is, and the verdict names the status.
 */

const PLAN: Plan = { name: 'free', windows: [{ name: 'ten', limit: 10, seconds: 10 }] };
const bare403: ServerOptions = {
  plans: { ...DEFAULT_PLANS, free: PLAN },
  refusalStatus: 403,
  refusalRetryAfter: false,
  headerDialect: 'none',
};

const runs = new Map<string, ProbeRun>();
beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  runs.set('told-nothing', await probeSimulated(bare403, PLAN));
  runs.set('named', await probeSimulated(bare403, PLAN, 1, undefined, undefined, [403]));
}, 60_000);

describe('a limiter refusing with a bare 403', () => {
  it('is no limit seen, told nothing: its 403s are authorization failures', () => {
    const r = runs.get('told-nothing')?.report;
    expect(r?.limiter.refusalStatus ?? null).toBeNull();
    expect(r?.verdict).toBe('fail');
  });

  it('with --refusal-status 403: its window of 10 per 10 s, the status named and failed', () => {
    const run = runs.get('named') as ProbeRun;
    const r = run.report;
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    expect(r.limiter.refusalStatus, why).toBe(403);
    expect(r.exhaust.first429At, why).toBe(11);
    expect(r.limiter.window?.limit, why).toBe(10);
    expect(Math.abs((r.limiter.window?.seconds ?? 0) - 10), why).toBeLessThanOrEqual(0.5);
    expect(r.reasons).toContain("refuses with 403, not 429 as the seed's contract says");
    expect(r.limiter.check?.refused ?? 0, why).toBe(0);
    expect(run.result.config.refusalStatuses).toEqual([403]);
  });
});
