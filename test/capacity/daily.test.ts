import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanDuration } from '../../src/api/duration.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  type Plan,
  type PlanTable,
  scalePlan,
} from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { dailyEstimateMs, dailyWindow, judgeDaily } from '../../src/capacity/measure/daily.ts';
import { runCapacity } from '../../src/capacity/run-capacity.ts';
import { evaluateThresholds } from '../../src/report/threshold-evaluate.ts';
import { parseThreshold } from '../../src/report/threshold-parse.ts';
import type { DailyWalk } from '../../src/result/capacity-types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import type { FaultOptions } from '../../src/server/faults.ts';
import { inSimulatedTime, type SimulatedServer, simulatedServer } from '../helpers/simulated.ts';

/**
 * The daily walk paces a day's quota window by window: it runs in simulated time against the
 * reference server answering in process (test/helpers/simulated.ts), so its windows cost only
 * their computation.
 */

// A day of a few minute windows: at time scale 60 a minute window lasts 1 s, so the walk takes seconds.
const PLANS: PlanTable = applyPlanOverrides(DEFAULT_PLANS, {
  free: { perMinute: 20, perDay: 90 },
  pro: { perMinute: 30, perDay: 150 },
});
const SCALE = 60;
/** Each answer takes a loopback's millisecond: at none, a request and its answer share one instant. */
const LOOPBACK_MS = 1;

// Read before any simulated run: a file read inside one would let its clock race ahead.
const spec = await loadSpec();

function measure(server: SimulatedServer, plans: string[], table: PlanTable = PLANS) {
  return runCapacity({
    target: server.url,
    embeddedTarget: true,
    targets: plans.map((name) => ({
      plan: table[name] as Plan,
      apiKey: `${name}-demo-key`,
      baseUrl: server.url,
      timeScale: SCALE,
      transport: server.transport,
    })),
    windows: 2,
    daily: true,
    operations: spec.operations,
    spec: 'built in',
  });
}

async function use(server: SimulatedServer, key: string, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await server.transport(undefined as never, {
      method: 'GET',
      path: '/pets?limit=1',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
  }
}

/** `body` in simulated time against a reference server of its own. */
async function withServer<T>(
  faults: FaultOptions | undefined,
  body: (s: SimulatedServer) => Promise<T>,
  plans: PlanTable = PLANS,
) {
  const server = await simulatedServer({ timeScale: SCALE, plans, faults }, LOOPBACK_MS);
  try {
    return await inSimulatedTime(() => body(server));
  } finally {
    await server.close();
  }
}

describe('capacity --daily against the reference server (time scale 60, a 90- and a 150-request day)', () => {
  let run: Awaited<ReturnType<typeof measure>>;
  let server: SimulatedServer;
  beforeAll(async () => {
    server = await simulatedServer({ timeScale: SCALE, plans: PLANS }, LOOPBACK_MS);
    run = await inSimulatedTime(async () => {
      // Pro's key has used 7 of its day already; its minute window has reset before the probe starts.
      await use(server, 'pro-demo-key', 7);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      return measure(server, ['free', 'pro']);
    });
  }, 60_000);
  afterAll(() => server?.close());

  it('free: the day admits its 90, the first 429 at 91, announced with the day’s limit and a long wait', () => {
    const r = run.reports.find((x) => x.plan === 'free');
    const d = r?.daily as DailyWalk;
    expect(r?.verdict, r?.reasons.join('; ')).toBe('pass');
    expect(d.usedBefore).toBe(0);
    expect(d.acceptedPerDay).toBe(90);
    expect(d.first429At).toBe(91);
    expect(d.limit).toBe(90);
    expect(d.rateLimited).toBe(0);
    // The day window is 1440 s at this scale: the quota is announced back nearly a day-window away.
    expect(d.retryAfterSeconds).toBeGreaterThan(1400);
    expect(d.announcedReturnAt).toBeGreaterThan((d.refusedAt as number) + 1_400_000);
    // Never more than a few requests beyond the day's limit.
    expect(d.sent - d.accepted).toBeLessThanOrEqual(3);
    expect(r?.violations).toBe(0);
  });

  it('pro: a key already used counts: 7 before, 143 by the probe, the first 429 at 151, with a note', () => {
    const r = run.reports.find((x) => x.plan === 'pro');
    const d = r?.daily as DailyWalk;
    expect(r?.verdict, r?.reasons.join('; ')).toBe('pass');
    expect(d.usedBefore).toBe(7);
    expect(d.acceptedByProbe).toBe(143);
    expect(d.acceptedPerDay).toBe(150);
    expect(d.first429At).toBe(151);
    expect(d.notes.join('; ')).toMatch(/used 7 of its day before the probe/);
  });

  it('writes a valid result, and thresholds gate on the day', () => {
    expect(resultProblem(JSON.parse(JSON.stringify(run.result)))).toBeUndefined();
    const ops = new Set(['listPets']);
    const verdicts = evaluateThresholds(
      [
        parseThreshold('capacity.free.accepted_per_day>=90', 'cli', ops),
        parseThreshold('capacity.pro.daily_first_429_at==151', 'cli', ops),
        parseThreshold('capacity.free.accepted_per_day>90', 'cli', ops),
      ],
      run.result,
    );
    expect(verdicts.map((v) => v.passed)).toEqual([true, true, false]);
  });
});

describe('capacity --daily against a server whose daily 429 announces a minute', () => {
  it('fails the plan: a client trusting that 429 would retry into a spent day', async () => {
    const { reports } = await withServer({ dayRetryAsMinute: true }, (s) => measure(s, ['free']));
    const r = reports[0];
    expect(r?.daily?.first429At).toBe(91);
    expect(r?.verdict).toBe('fail');
    expect(r?.reasons.join('; ')).toMatch(/announced the quota back in 1(\.\d)? s, a minute window's wait/);
  }, 40_000);

  it('fails the plan when the day never runs out, with no more than 3 requests beyond it', async () => {
    // The leak lets 5 more through every window, the day's included: the walk stops at 90 + 3.
    const { reports } = await withServer({ limiterLeak: 5 }, (s) => measure(s, ['free']));
    const d = reports[0]?.daily as DailyWalk;
    expect(d.first429At).toBeNull();
    expect(d.acceptedByProbe).toBeLessThanOrEqual(93);
    expect(reports[0]?.verdict).toBe('fail');
  }, 40_000);
});

describe('capacity against a key whose day runs out during the minute phases', () => {
  it('stops instead of waiting the day out, and says why', async () => {
    // 50 a day: two paced windows take 40, the exhausted window meets the day's 429 at its 11th request.
    const fifty = applyPlanOverrides(DEFAULT_PLANS, { free: { perMinute: 20, perDay: 50 } });
    const { reports } = await withServer(undefined, (server) => measure(server, ['free'], fifty), fifty);
    const r = reports[0];
    expect(r?.exhaust.first429At).toBe(11);
    expect(r?.recovery.probes).toBe(0);
    expect(r?.verdict).toBe('fail');
    // The day's wait (24 minutes at time scale 60) is past --max-wait's default of 10 minutes.
    expect(r?.reasons[0]).toMatch(
      /announced a wait of \d+(\.\d)? s, longer than --max-wait \(600 s\): a longer quota \(the day's\?\) is spent/,
    );
    expect(r?.violations).toBe(0);
  }, 20_000);
});

describe('the daily verdict and estimate', () => {
  const walk = (over: Partial<DailyWalk>): DailyWalk => ({
    promised: 1000,
    windowSeconds: 86_400,
    minuteSeconds: 60,
    windows: 17,
    sent: 1000,
    accepted: 999,
    acceptedByProbe: 1000,
    usedBefore: 0,
    acceptedPerDay: 1000,
    first429At: 1001,
    expected429At: 1001,
    limit: 1000,
    retryAfterSeconds: 80_000,
    reset: (1_000_000_000 + 80_000_000) / 1000,
    refusedAt: 1_000_000_000,
    announcedReturnAt: 1_000_000_000 + 80_000_000,
    rateLimited: 0,
    notes: [],
    durationMs: 1,
    ...over,
  });

  it('passes a day kept to the request, and names each way a day can be wrong', () => {
    expect(judgeDaily(walk({}))).toEqual([]);
    expect(judgeDaily(walk({ first429At: 996, acceptedPerDay: 995 })).join()).toMatch(
      /at request 996, expected 1001/,
    );
    expect(judgeDaily(walk({ limit: 60 })).join()).toMatch(/X-RateLimit-Limit 60, not the day's 1000/);
    expect(judgeDaily(walk({ retryAfterSeconds: null })).join()).toMatch(/no Retry-After/);
    expect(judgeDaily(walk({ retryAfterSeconds: 70_000 })).join()).toMatch(/disagree by 10000000 ms/);
    expect(judgeDaily(walk({ rateLimited: 2 })).join()).toMatch(/2 429\(s\) at the plan rate/);
    expect(
      judgeDaily(walk({ first429At: null, acceptedPerDay: null, acceptedByProbe: 1003 })).join(),
    ).toMatch(/no daily 429 within 1003 admitted requests/);
  });

  it('estimates a day at the minute limit per window: Free is 17 minutes against a real server', () => {
    const free = DEFAULT_PLANS.free as Plan;
    const [minute, day] = free.windows as [NonNullable<Plan['windows'][0]>, NonNullable<Plan['windows'][0]>];
    const real = dailyEstimateMs(minute, day, 2);
    // 1000 a day at 60 a minute: 17 windows in all (phases included), 5% guard each.
    expect(real / 60_000).toBeGreaterThan(16.6);
    expect(real / 60_000).toBeLessThan(21);
    const scaled = scalePlan(free, 10);
    const tenth = dailyEstimateMs(scaled.windows[0] as typeof minute, dailyWindow(scaled) as typeof day, 2);
    expect(tenth).toBeCloseTo(real / 10, 6);
    expect(humanDuration(real)).toMatch(/^\d+ min( \d+ s)?$/);
    expect(humanDuration(7_260_000)).toBe('2 h 1 min');
    expect(humanDuration(35_000)).toBe('35 s');
  });

  it('knows a plan without a daily window', () => {
    expect(dailyWindow({ name: 'x', windows: [{ name: 'minute', limit: 5, seconds: 60 }] })).toBeUndefined();
    expect(dailyWindow(DEFAULT_PLANS.pro as Plan)?.limit).toBe(10_000);
  });
});
