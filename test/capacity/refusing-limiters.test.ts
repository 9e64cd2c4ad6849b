import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { capacityThroughCli } from '../helpers/capacity-cases.ts';
import {
  type CliOutcome,
  cliWorkspace,
  outcomeContext,
  readJson,
  runCli,
} from '../helpers/integration-cli.ts';
import { type RunningLimiter, startNginxLimitReq } from '../helpers/limiters.ts';
import { startForbiddingRateLimit, startSlidingLog, startVarnishThrottle } from '../helpers/more-limiters.ts';

/**
 * Real limiters that refuse in other words than 429, or keep windows `capacity` misread, through the
 * CLI as a user runs it, side by side: nginx `limit_req` as it ships (no `limit_req_status`: a bare
 * 503), express-rate-limit refusing with 403 and its X-RateLimit-* fields (no Retry-After), Varnish's
 * vsthrottle, a token bucket that blocks a key at its first excess, and rolling-rate-limiter's two
 * moving windows (a 429 with Retry-After and no rate-limit header: the burst from rest spends the
 * longer window before the probe knows of it). Each `capacity` finds the model its configuration
 * says, names the status it refused with, and its own paced check draws no refusal; each raw `run` at
 * 3x is held to a refusal a window or so. Rates are the acceptance's, faster or in shorter windows,
 * so that all of it takes under a minute; the acceptance's own figures are in its note.
 */

const NGINX = { rate: '120r/m', perSecond: 2, plan: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };
const FORBID = { limit: 10, windowMs: 5000, plan: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };
const VARNISH = {
  limit: 10,
  periodS: 5,
  blockS: 12,
  plan: [{ name: 'five-seconds', limit: 10, seconds: 5 }],
};
const MOVING = [
  { name: 'short', limit: 10, seconds: 3 },
  { name: 'long', limit: 20, seconds: 9 },
];
const RAW_S = 15;

const work = cliWorkspace('refusing');
let upstream: RunningServer;
const limiters: RunningLimiter[] = [];
const capacity = new Map<string, Awaited<ReturnType<typeof capacityThroughCli>>>();
const raw = new Map<string, { outcome: CliOutcome; result: RunResult }>();

async function started(start: () => Promise<RunningLimiter>): Promise<RunningLimiter> {
  const l = await start();
  limiters.push(l);
  return l;
}

/** `run` through the CLI in raw mode at 3x the plan for RAW_S seconds, the default scenario. */
async function rawRun(url: string, windows: object[], dir: string) {
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ free: { windows } }));
  const out = join(dir, 'out');
  const args = ['run', 'mixed-traffic', '--base-url', url, '--api-key', 'free-demo-key', '--plan', 'free'];
  const outcome = await runCli(
    [
      ...args,
      '--plans',
      plans,
      '--enforce',
      'off',
      '--rate',
      '300%',
      '--duration',
      `${RAW_S}s`,
      '--out',
      out,
    ],
    60_000,
  );
  return { outcome, result: readJson(join(out, 'result.json')) as RunResult };
}

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  const nginx = () =>
    startNginxLimitReq({
      upstream: upstream.url,
      rate: NGINX.rate,
      status: 'nginx-default',
      zoneKey: '$http_authorization',
    });
  const forbid = () =>
    startForbiddingRateLimit({ upstream: upstream.url, limit: FORBID.limit, windowMs: FORBID.windowMs });
  const cases: Promise<void>[] = [
    started(nginx).then(
      async (l) =>
        void capacity.set('nginx', await capacityThroughCli(l.url, NGINX.plan, work.fresh('nginx'))),
    ),
    started(forbid).then(
      async (l) =>
        void capacity.set('forbid', await capacityThroughCli(l.url, FORBID.plan, work.fresh('forbid'))),
    ),
    started(() =>
      startVarnishThrottle({
        upstream: upstream.url,
        limit: VARNISH.limit,
        periodS: VARNISH.periodS,
        blockS: VARNISH.blockS,
      }),
    ).then(
      async (l) =>
        void capacity.set('varnish', await capacityThroughCli(l.url, VARNISH.plan, work.fresh('varnish'))),
    ),
    started(() =>
      startSlidingLog({
        upstream: upstream.url,
        windows: MOVING.map((w) => ({ limit: w.limit, windowMs: w.seconds * 1000 })),
      }),
    ).then(
      async (l) => void capacity.set('moving', await capacityThroughCli(l.url, MOVING, work.fresh('moving'))),
    ),
    started(nginx).then(
      async (l) => void raw.set('nginx', await rawRun(l.url, NGINX.plan, work.fresh('nginx-raw'))),
    ),
    started(forbid).then(
      async (l) => void raw.set('forbid', await rawRun(l.url, FORBID.plan, work.fresh('forbid-raw'))),
    ),
  ];
  await Promise.all(cases);
}, 120_000);

afterAll(async () => {
  await Promise.all(limiters.map((l) => l.stop()));
  await upstream?.close();
});

const report = (name: string) => {
  const c = capacity.get(name);
  if (!c?.report) throw new Error(`no capacity report for ${name}: ${c?.why}`);
  return { ...c, report: c.report };
};

describe('capacity through the CLI', () => {
  it('nginx limit_req as it ships: a GCRA at its rate, refusing with 503, and the verdict says so', () => {
    const { report: r, why } = report('nginx');
    expect(r.limiter.type, why).toBe('gcra');
    expect(Math.abs((r.limiter.sustainedPerSecond ?? 0) / NGINX.perSecond - 1), why).toBeLessThanOrEqual(0.1);
    expect(r.limiter.refusalStatus, why).toBe(503);
    expect(r.reasons, why).toContain("refuses with 503, not 429 as the seed's contract says");
    expect(r.limiter.check?.refused, why).toBe(0);
  });

  it('a 403 with X-RateLimit-* and no Retry-After: its fixed window measured, refusing with 403', () => {
    const { report: r, why } = report('forbid');
    expect(r.limiter.type, why).toBe('fixed-window');
    expect(r.limiter.window?.limit, why).toBe(FORBID.limit);
    expect(Math.abs((r.limiter.window?.seconds ?? 0) - FORBID.windowMs / 1000), why).toBeLessThanOrEqual(0.5);
    expect(r.limiter.refusalStatus, why).toBe(403);
    expect(r.limiter.check?.refused, why).toBe(0);
  });

  it("Varnish's token bucket with a block: the block's length and the rate under it, one excess only", () => {
    const { report: r, result, why } = report('varnish');
    expect(Math.abs((r.limiter.block?.seconds ?? 0) - VARNISH.blockS), why).toBeLessThanOrEqual(2);
    const rate = VARNISH.limit / VARNISH.periodS;
    expect(Math.abs((r.limiter.sustainedPerSecond ?? 0) / rate - 1), why).toBeLessThanOrEqual(0.1);
    expect(r.limiter.check?.refused, why).toBe(0);
    expect(result.compliance.rateLimited, why).toBe(1);
  });
});

describe('capacity through the CLI: two moving windows of rolling-rate-limiter', () => {
  it('are both measured within 10%, the longer typed sliding-window, and the paced windows draw no 429', () => {
    const { report: r, result, why } = report('moving');
    const [short, long] = r.limiter.windows ?? [];
    expect(short?.limit, why).toBe(10);
    expect(Math.abs((short?.seconds ?? 0) - 3), why).toBeLessThanOrEqual(0.3);
    const longWhy = `${long?.evidence}\n${why}`;
    expect(long?.measured, longWhy).toBe(true);
    expect(long?.limit, longWhy).toBe(20);
    expect(Math.abs((long?.seconds ?? 0) - 9), longWhy).toBeLessThanOrEqual(0.9);
    expect(long?.type, longWhy).toBe('sliding-window');
    expect(r.rate.acceptedPerWindow, why).toEqual([10, 10]);
    expect(r.rate.rateLimited, why).toBe(0);
    // Checked, told nothing of the windows' kind, after a rest as long as the longer one.
    expect(r.limiter.check, why).toBeTruthy();
    expect(r.limiter.check?.refused, why).toBe(0);
    expect(result.compliance.violations).toBe(0);
  });
});

describe(`run in raw mode at 3x for ${RAW_S} s, through the CLI`, () => {
  it('against the bare 503s: each kept away from, counted apart and named, a few in all', () => {
    const { outcome, result } = raw.get('nginx') as { outcome: CliOutcome; result: RunResult };
    const c = result.compliance;
    const why = `${outcomeContext(outcome)}\n${JSON.stringify(c)}`;
    // Setup went at the plan's gap (its POSTs, not retried after a bare 503, were all admitted),
    // and the workload ran.
    expect(result.meta.partial, why).toBe(false);
    expect(result.workload.iterations, why).toBeGreaterThan(0);
    // One a window or so after the first, as against a 429: a deaf client meets about 4 a second.
    expect(c.unexplained ?? 0, why).toBeGreaterThan(0);
    expect(c.unexplained ?? 0, why).toBeLessThanOrEqual(8);
    expect(c.violations, why).toBe(0);
    expect(c.quotaUtilization, why).toBeLessThanOrEqual(1);
    expect(outcome.stdout + outcome.stderr, why).toContain('--refusal-status 503');
  });

  it('against the 403s: counted as refusals by their status, a few in all', () => {
    const { outcome, result } = raw.get('forbid') as { outcome: CliOutcome; result: RunResult };
    const c = result.compliance;
    const why = `${outcomeContext(outcome)}\n${JSON.stringify(c)}`;
    expect(c.rateLimited, why).toBeGreaterThan(0);
    expect(c.rateLimited, why).toBeLessThanOrEqual(8);
    expect(c.refusals, why).toEqual({ 403: c.rateLimited });
    expect(c.violations, why).toBe(0);
  });
});
