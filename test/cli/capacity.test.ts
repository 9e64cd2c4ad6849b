import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS } from '../../src/api/plans.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { killAllClis, killCli, readJson, runCli, spawnCli, withTimeout } from '../helpers/integration-cli.ts';

/**
 * `petstore-load capacity` as a user runs it, with nothing but the defaults: the embedded server
 * (time-scaled), the demo key of every plan, the seed's real limits. What the issue asks of it:
 * every plan's promise kept to the request, the first 429 at limit + 1, the quota back within 1 s
 * of what the headers announced, a fixed window recognised, under two minutes.
 */

const dir = mkdtempSync(join(tmpdir(), 'petstore-load-capacity-'));
afterAll(() => {
  killAllClis();
  rmSync(dir, { recursive: true, force: true });
});

describe('petstore-load capacity (embedded server, every plan)', () => {
  it('finds every plan as promised: accepted = limit, first 429 at limit + 1, reset within 1 s, a fixed window', async () => {
    const out = join(dir, 'run');
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

describe('petstore-load capacity --daily and --probe-ban (embedded server, time scale 60)', () => {
  it('walks a small day, saying first how long it takes, and provokes the ban on a server of its own', async () => {
    const plans = join(dir, 'small-day.json');
    writeFileSync(plans, JSON.stringify({ free: { perMinute: 20, perDay: 100 } }));
    const out = join(dir, 'daily-ban');
    const outcome = await runCli(
      [
        'capacity',
        '--key',
        'free=free-demo-key',
        '--plans',
        plans,
        '--time-scale',
        '60',
        '--daily',
        '--probe-ban',
        '--threshold',
        'capacity.free.accepted_per_day==100',
        '--threshold',
        'capacity.free.strikes_to_ban==6',
        '--out',
        out,
      ],
      90_000,
    );
    const context = `${outcome.stdout}\n${outcome.stderr}`;
    expect(outcome.code, context).toBe(0);
    // Said before anything is sent: the day's length in requests and in time, and the ban's terms.
    expect(outcome.stderr).toMatch(/--daily walks 100 requests a day at 20 per 1 s: about \d+ s in all/);
    expect(outcome.stderr).toMatch(
      /ban probe on a free key: .* the ban \(10 s on the embedded server\) is waited out/,
    );
    const result = readJson(join(out, 'result.json')) as RunResult;
    expect(resultProblem(result)).toBeUndefined();
    expect(result.capacity?.[0]?.daily?.first429At).toBe(101);
    expect(result.banProbe?.strikes.toBan).toBe(6);
    expect(result.banProbe?.ban?.code).toBe('temporarily_banned');
    expect(result.banProbe?.verdict).toBe('pass');
    // The ban key's deliberate requests are not the run's: no violation, no failed client check.
    expect(result.compliance.violations).toBe(0);
    expect(result.checks.filter((c) => c.failures > 0).map((c) => c.id)).toEqual([]);
    expect(outcome.stdout).toMatch(
      /ban probe \(free key, \d+ requests\): banned at request 6 inside Retry-After/,
    );
    expect(outcome.stdout).toMatch(/threshold capacity.free.strikes_to_ban==6: pass/);
  }, 100_000);

  it('on Ctrl-C writes what it measured, marked partial, and exits 130', async () => {
    const out = join(dir, 'interrupted');
    const cli = spawnCli(['capacity', '--key', 'free=free-demo-key', '--out', out]);
    try {
      const deadline = Date.now() + 20_000;
      while (!cli.stderr().includes('capacity: free:') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 2000));
      cli.child.kill('SIGINT');
      const { code } = await withTimeout(cli.exited, 20_000, 'capacity after SIGINT');
      expect(code, cli.stderr()).toBe(130);
      expect(existsSync(join(out, 'result.json'))).toBe(true);
      const result = readJson(join(out, 'result.json')) as RunResult;
      expect(result.meta.partial).toBe(true);
      expect(result.overall.requests).toBeGreaterThan(0);
      expect(cli.stderr()).toMatch(/capacity interrupted/);
    } finally {
      killCli(cli);
    }
  }, 40_000);
});
