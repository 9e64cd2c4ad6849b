import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { capacityThroughCli } from '../helpers/capacity-cases.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import type { RunningLimiter } from '../helpers/limiters.ts';
import { startSlidingLog } from '../helpers/more-limiters.ts';

/**
 * rolling-rate-limiter's sliding logs stacked, 10 per 3 s and 20 per 9 s, in real time through the
 * CLI as a user runs `capacity`: a 429 with Retry-After in whole seconds and no rate-limit header,
 * so the probe takes the model-first order, where its burst from rest spends the longer window
 * before it knows of it. The same two moving
 * windows on the reference server, in simulated time: moving-longer-windows.test.ts.
 */
const PLAN: Plan = {
  name: 'free',
  windows: [
    { name: 'short', limit: 10, seconds: 3 },
    { name: 'long', limit: 20, seconds: 9 },
  ],
};
const work = cliWorkspace('moving');
let upstream: RunningServer;
let limiter: RunningLimiter;

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  limiter = await startSlidingLog({
    upstream: upstream.url,
    windows: PLAN.windows.map((w) => ({ limit: w.limit, windowMs: w.seconds * 1000 })),
  });
});
afterAll(async () => {
  await limiter?.stop();
  await upstream?.close();
});

describe('two moving windows of rolling-rate-limiter', () => {
  it('are both measured within 10%, the longer typed sliding-window, and the paced windows draw no 429', async () => {
    const run = await capacityThroughCli(limiter.url, PLAN.windows, work.fresh('moving'));
    const { result, elapsedMs } = run;
    const r = run.report;
    if (!r) throw new Error(`no capacity report: ${run.why}`);
    const why = `${r.reasons.join('; ')} | ${r.limiter.evidence.join('; ')}`;
    const [short, long] = r.limiter.windows ?? [];
    expect(short?.limit, why).toBe(10);
    expect(Math.abs((short?.seconds ?? 0) - 3), why).toBeLessThanOrEqual(0.3);
    expect(long?.measured, long?.evidence).toBe(true);
    expect(long?.limit, long?.evidence).toBe(20);
    expect(Math.abs((long?.seconds ?? 0) - 9), long?.evidence).toBeLessThanOrEqual(0.9);
    expect(long?.type, long?.evidence).toBe('sliding-window');
    expect(r.rate.acceptedPerWindow, why).toEqual([10, 10]);
    expect(r.rate.rateLimited, why).toBe(0);
    expect(r.limiter.check?.refused ?? 0, why).toBe(0);
    expect(result.compliance.violations).toBe(0);
    expect(elapsedMs).toBeLessThanOrEqual(60_000);
  }, 90_000);
});
