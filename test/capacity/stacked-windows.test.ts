import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { capacityThroughCli, expectModelHolds } from '../helpers/capacity-cases.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import { type RunningLimiter, startStackedExpressRateLimit } from '../helpers/limiters.ts';

/**
 * `capacity` through the CLI against two real express-rate-limit instances stacked, 10 per 4 s and
 * 20 per 12 s, as an app enforces two windows at once. Each writes its own headers: an admitted
 * answer tells the longer window's room (Limit 20), a refusal the window that refused, so the
 * shorter window's 429 comes while the headers still told room, and the longer one's may tell a
 * wait no longer than the shorter window. Both windows are measured against the library's own
 * configuration, and the plan naming both passes. The same two windows on the reference server,
 * its headers telling the window nearer to spent, in simulated time: longer-windows.test.ts.
 */

const SHORT = { limit: 10, seconds: 4 };
const LONG = { limit: 20, seconds: 12 };
const workspace = cliWorkspace('stacked-windows');
let upstream: RunningServer;
let limiter: RunningLimiter;

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  limiter = await startStackedExpressRateLimit({
    upstream: upstream.url,
    windows: [SHORT, LONG].map((w) => ({ limit: w.limit, windowMs: w.seconds * 1000 })),
  });
});
afterAll(async () => {
  await limiter?.stop();
  await upstream?.close();
});

describe('two express-rate-limit windows stacked', () => {
  it('capacity measures both within 10%, in 3 windows of the longer and 30 s, and passes', async () => {
    const {
      outcome,
      result,
      report: r,
      why,
      elapsedMs,
    } = await capacityThroughCli(
      limiter.url,
      [
        { name: 'short', ...SHORT },
        { name: 'long', ...LONG },
      ],
      workspace.fresh('run'),
    );
    if (!r) throw new Error(`no capacity report: ${outcome.stderr}`);
    expect(outcome.code, why).toBe(0);
    expect(resultProblem(result)).toBeUndefined();
    expect(r.exhaust.first429At, why).toBe(SHORT.limit + 1);
    expect(r.limiter.maxInFlight ?? null, why).toBeNull();
    const [short, long] = r.limiter.windows ?? [];
    for (const [got, want] of [
      [short, SHORT],
      [long, LONG],
    ] as const) {
      expect(got?.measured, got?.evidence).toBe(true);
      expect(got?.limit, why).toBe(want.limit);
      expect(Math.abs((got?.seconds ?? 0) - want.seconds), got?.evidence).toBeLessThanOrEqual(
        want.seconds * 0.1,
      );
    }
    expect(r.verdict, why).toBe('pass');
    expectModelHolds(r);
    expect(result.compliance.violations).toBe(0);
    expect(elapsedMs).toBeLessThanOrEqual(3 * LONG.seconds * 1000 + 30_000);
    expect(outcome.stdout).toContain(`and ${LONG.limit} per`);
  }, 100_000);
});
