import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import {
  cliWorkspace,
  killCli,
  readJson,
  runCli,
  spawnCli,
  withTimeout,
} from '../helpers/integration-cli.ts';

/**
 * `petstore-load capacity` on one free key: a small day walked at time scale 60 with the ban
 * provoked, and an interrupted run. Both spend their time waiting (a day's windows at 20 requests a
 * second, the ban's 10 s), unlike the default run over every plan in capacity.test.ts, which needs
 * a core of its own.
 */

const freshDir = cliWorkspace('capacity').fresh;

describe('petstore-load capacity --daily and --probe-ban (embedded server, time scale 60)', () => {
  it('walks a small day, saying first how long it takes, and provokes the ban on a server of its own', async () => {
    const plans = join(freshDir('plans'), 'small-day.json');
    writeFileSync(plans, JSON.stringify({ free: { perMinute: 20, perDay: 100 } }));
    const out = freshDir('daily-ban');
    const outcome = await runCli(
      [
        'capacity',
        '--api-key',
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
    const out = freshDir('interrupted');
    const cli = spawnCli(['capacity', '--api-key', 'free=free-demo-key', '--out', out]);
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
