import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, type RateWindow } from '../../src/api/plans.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { runListAgainst } from '../helpers/integration-run.ts';
import { rateFigures } from '../helpers/limiter-verdicts.ts';
import { inSimulatedTime, simulatedServer } from '../helpers/simulated.ts';
import { limitReq } from '../helpers/simulated-limiters.ts';

/**
 * The client against limiters that say no in other words than 429, in simulated time: nginx
 * `limit_req` as it ships (a bare 503, no header, no Retry-After: ambiguous, kept away from as a
 * refusal and counted apart), the same with `--refusal-status 503` (counted as the limiter's), and
 * the reference server refusing with 403 and its X-RateLimit-* fields (Remaining 0, no Retry-After):
 * a refusal by its sign. Raw mode at 3x for 30 s draws at most one refusal a window after the first,
 * as against a 429; paced, none. And two moving windows at once (10 per 10 s and 20 per 30 s):
 * paced, the run uses what the plan's windows together admit, not what the shorter alone promises.
 */

const MINUTE: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 }];
const TEN: RateWindow[] = [{ name: 'ten', limit: 10, seconds: 10 }];
const MOVING: RateWindow[] = [...TEN, { name: 'thirty', limit: 20, seconds: 30 }];
const RAW = { executor: 'constant-arrival-rate', rate: '300%', duration: '30s', maxInFlight: 8 } as const;

const runs = new Map<string, RunResult>();

async function through(
  server: ServerOptions,
  limiter: ((upstream: Transport) => Transport) | undefined,
  o: Omit<Parameters<typeof runListAgainst>[1], 'transport'>,
): Promise<RunResult> {
  const upstream = await simulatedServer({ seedData: 3, ...server });
  try {
    const transport = limiter ? limiter(upstream.transport) : upstream.transport;
    return await inSimulatedTime(() => runListAgainst(upstream.url, { ...o, transport }));
  } finally {
    await upstream.close();
  }
}

const nginx = (u: Transport) => limitReq(u, { perSecond: 1, status: 503 });
const refusing403: ServerOptions = {
  plans: { ...DEFAULT_PLANS, free: { name: 'free', windows: TEN } },
  refusalStatus: 403,
  refusalRetryAfter: false,
};
const moving = (headerDialect: 'seed' | 'none'): ServerOptions => ({
  plans: { ...DEFAULT_PLANS, free: { name: 'free', windows: MOVING } },
  limiter: 'sliding',
  longerWindows: 'sliding',
  headerDialect,
});

beforeAll(async () => {
  // One after the other: the fake clock is the process's.
  const unlimited = { rateLimit: false };
  runs.set(
    'nginx-paced',
    await through(unlimited, nginx, {
      workload: { executor: 'constant-vus', vus: 4, duration: '60s' },
      windows: MINUTE,
      enforce: true,
    }),
  );
  runs.set('nginx-raw', await through(unlimited, nginx, { workload: RAW, windows: MINUTE, enforce: false }));
  runs.set(
    'nginx-raw-named',
    await through(unlimited, nginx, {
      workload: RAW,
      windows: MINUTE,
      enforce: false,
      refusalStatuses: [503],
    }),
  );
  runs.set('403-raw', await through(refusing403, undefined, { workload: RAW, windows: TEN, enforce: false }));
  const paced = { executor: 'constant-vus', vus: 4, duration: '90s' } as const;
  runs.set(
    'moving',
    await through(moving('none'), undefined, { workload: paced, windows: MOVING, enforce: true }),
  );
  // Told the reset of the whole quota, a sliding log's return one by one is the client's to know.
  runs.set(
    'moving-told',
    await through(moving('seed'), undefined, {
      workload: paced,
      windows: MOVING,
      enforce: true,
      limiter: 'sliding-window',
    }),
  );
}, 120_000);

const get = (name: string) => runs.get(name) as RunResult;

describe('nginx limit_req as it ships: a bare 503 for each excess', () => {
  it('paced at the plan, draws none', () => {
    const r = get('nginx-paced');
    expect(r.compliance.rateLimited + (r.compliance.unexplained ?? 0), rateFigures(r)).toBe(0);
    expect(r.compliance.quotaUtilization, rateFigures(r)).toBeGreaterThanOrEqual(0.9);
  });

  it('raw at 3x for 30 s: the bare 503s kept away from as refusals (at most 8), counted apart, never a violation', () => {
    const r = get('nginx-raw');
    const c = r.compliance;
    expect(c.unexplained ?? 0, rateFigures(r)).toBeGreaterThan(0);
    expect(c.unexplained ?? 0, rateFigures(r)).toBeLessThanOrEqual(8);
    // Not the limiter's, as far as anything said: no refusal by status, the 429 rate untouched.
    expect(c.rateLimited).toBe(0);
    expect(c.refusals).toEqual({});
    expect(c.violations).toBe(0);
    expect(c.quotaUtilization, rateFigures(r)).toBeLessThanOrEqual(1);
    expect(resultProblem(r)).toBeUndefined();
  });

  it('with --refusal-status 503: the same conduct, the 503s counted as the refusals they are', () => {
    const r = get('nginx-raw-named');
    const c = r.compliance;
    expect(c.rateLimited, rateFigures(r)).toBeGreaterThan(0);
    expect(c.rateLimited, rateFigures(r)).toBeLessThanOrEqual(8);
    expect(c.refusals).toEqual({ 503: c.rateLimited });
    expect(c.unexplained).toBeUndefined();
    expect(c.violations).toBe(0);
    expect(c.quotaUtilization, rateFigures(r)).toBeLessThanOrEqual(1);
    expect(r.config.refusalStatuses).toEqual([503]);
    // The seed's contract says 429: every refusal in another status fails the check that says so.
    expect(r.checks.find((ch) => ch.id === 'refusal-is-429')?.failures, rateFigures(r)).toBe(c.rateLimited);
  });
});

describe('a limiter refusing with 403, Remaining 0 and no Retry-After (10 per 10 s, Reset told)', () => {
  it('raw at 3x for 30 s: at most 8 refusals, named 403, the key paused until the told Reset', () => {
    const r = get('403-raw');
    const c = r.compliance;
    expect(c.rateLimited, rateFigures(r)).toBeGreaterThan(0);
    expect(c.rateLimited, rateFigures(r)).toBeLessThanOrEqual(8);
    expect(c.refusals).toEqual({ 403: c.rateLimited });
    expect(c.violations).toBe(0);
    // Three windows of 10 begun in 30 s, each admitted whole at its start: up to the last one's
    // requests answered as the run closes above the windows' rate over the span, and no more.
    expect(c.quotaUtilization, rateFigures(r)).toBeLessThanOrEqual(1 + 10 / 30);
    expect(c.quotaUtilization, rateFigures(r)).toBeGreaterThanOrEqual(0.9);
  });
});

describe('two moving windows at once: 10 per 10 s and 20 per 30 s', () => {
  it("paced with --limiter sliding-window, told the whole quota's reset: the slots used as they come back", () => {
    const r = get('moving-told');
    expect(r.compliance.rateLimited, rateFigures(r)).toBe(0);
    expect(r.compliance.quotaUtilization, rateFigures(r)).toBeGreaterThanOrEqual(0.95);
  });

  it('paced, told nothing: at least 95% of what both windows admit (2/3 a second), no refusal', () => {
    const r = get('moving');
    expect(r.compliance.rateLimited, rateFigures(r)).toBe(0);
    expect(r.compliance.quotaUtilization, rateFigures(r)).toBeGreaterThanOrEqual(0.95);
    // Against the shorter window's rate alone (1/s) the same run would read about 2/3.
    expect(r.compliance.admitted / 90, rateFigures(r)).toBeLessThan(0.7);
    // Requests answered as the run closes may add one slot's worth, no more.
    expect(r.compliance.quotaUtilization, rateFigures(r)).toBeLessThanOrEqual(1 + 2 / 60);
  });
});
