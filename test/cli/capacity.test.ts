import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/api/plans.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { cliWorkspace, readJson, runCli } from '../helpers/integration-cli.ts';

/**
 * `petstore-load capacity` as a user runs it, with nothing but the defaults: the embedded server
 * (time-scaled), the demo key of every plan, the seed's real limits. What the issue asks of it:
 * every plan's promise kept to the request, the first 429 at limit + 1, the quota back within 1 s
 * of what the headers announced, a fixed window recognised, under two minutes.
 */

const freshDir = cliWorkspace('capacity').fresh;

describe('petstore-load capacity (embedded server, every plan)', () => {
  it('finds every plan as promised: accepted = limit, first 429 at limit + 1, reset within 1 s, a fixed window', async () => {
    const out = freshDir('run');
    const started = Date.now();
    const outcome = await runCli(['capacity', '--out', out], 120_000);
    const context = `${outcome.stdout}\n${outcome.stderr}`;
    expect(outcome.code, context).toBe(0);
    expect(Date.now() - started).toBeLessThan(120_000);
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    const reports = result.capacity ?? [];
    expect(reports.map((r) => r.plan).sort()).toEqual(['business', 'enterprise', 'free', 'pro']);
    for (const r of reports) {
      const limit = DEFAULT_PLANS[r.plan]?.windows[0]?.limit;
      expect(r.promisedPerMinute, r.plan).toBe(limit);
      expect(r.rate.acceptedPerWindow, r.plan).toEqual([limit, limit]);
      expect(r.exhaust.first429At, r.plan).toBe((limit as number) + 1);
      expect(Math.abs(r.recovery.resetErrorMs as number), r.plan).toBeLessThanOrEqual(1000);
      expect(r.limiter.type, r.plan).toBe('fixed-window');
      expect(r.limiter.headerDialect, r.plan).toBe('seed');
      expect(r.limiter.window?.limit, r.plan).toBe(limit);
      expect(r.violations, r.plan).toBe(0);
      expect(r.verdict, r.plan).toBe('pass');
    }
    expect(result.compliance.violations).toBe(0);
    expect(outcome.stdout).toMatch(/^free\s+60\s+1000\s/m);
    // The rate search a silent or continuously refilling limiter would need is bounded, and said up front.
    expect(outcome.stderr).toMatch(
      /adds a search for its rate: at most 30 requests, 6 of them refused, and /,
    );
    expect(outcome.stdout).toContain(`report written to ${join(out, 'report.html')}`);
  }, 150_000);
});
