import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultProblem } from '../../src/result/validate.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { capacityThroughCli } from '../helpers/capacity-cases.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import { type RunningLimiter, startFlexibleBlock } from '../helpers/limiters.ts';

/**
 * `capacity` through the CLI against the real rate-limiter-flexible with `blockDuration`, in an express
 * app as its README wires one (X-RateLimit-* on every answer, Retry-After on a 429): 10 per 4 s, a key
 * blocked 12 s at its first excess. The block is measured and named, the window under it reported,
 * and the verdict passes. The same probe against the reference server's `--block` in simulated time
 * is test/capacity/block.test.ts.
 */

const LIMIT = { points: 10, durationS: 4, blockDurationS: 12 };
const workspace = cliWorkspace('real-block');
let upstream: RunningServer;
let limiter: RunningLimiter;

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  limiter = await startFlexibleBlock({ upstream: upstream.url, ...LIMIT });
});
afterAll(async () => {
  await limiter?.stop();
  await upstream?.close();
});

describe('rate-limiter-flexible with blockDuration: a key blocked at its first excess', () => {
  it('capacity measures the block within 1.5 s, reports the window under it, and passes', async () => {
    const {
      outcome,
      result,
      report: r,
      why,
    } = await capacityThroughCli(
      limiter.url,
      [{ name: 'short', limit: LIMIT.points, seconds: LIMIT.durationS }],
      workspace.fresh('run'),
    );
    expect(outcome.code, why).toBe(0);
    expect(resultProblem(result)).toBeUndefined();
    expect(Math.abs((r?.limiter.block?.seconds ?? 0) - LIMIT.blockDurationS), why).toBeLessThanOrEqual(1.5);
    expect(r?.limiter.block?.afterExcessOf).toBe(1);
    // The library blocks once: the request inside the block does not prolong it.
    expect(r?.limiter.block?.extendedByProbes).toBe(false);
    expect(r?.limiter.window).toEqual({ limit: LIMIT.points, seconds: LIMIT.durationS });
    expect(r?.exhaust.first429At).toBe(LIMIT.points + 1);
    expect(r?.rate.acceptedPerWindow).toEqual([LIMIT.points, LIMIT.points]);
    expect(r?.verdict, why).toBe('pass');
    expect(result.compliance.violations).toBe(0);
    // Paced last at the model it inferred (10 per 4 s), it drew no 429.
    expect(r?.limiter.check, why).toEqual({ sent: 2 * LIMIT.points, refused: 0, phase: 'paced-windows' });
    // The table names the block beside the model.
    expect(outcome.stdout).toMatch(/blocks 1\d(\.\d)? s at its first excess/);
  }, 100_000);
});
