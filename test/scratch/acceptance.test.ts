import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { startServer } from '../../src/server/index.ts';
import { readJson, runCli } from '../helpers/integration-cli.ts';
import { startNginxLimitReq } from '../helpers/limiters.ts';
import { startForbiddingRateLimit, startSlidingLog, startVarnishThrottle } from '../helpers/more-limiters.ts';

async function cliRun(url: string, windows: object[], extra: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'acc-'));
  writeFileSync(join(dir, 'plans.json'), JSON.stringify({ free: { windows } }));
  const out = join(dir, 'out');
  const o = await runCli(
    [
      'run',
      '--base-url',
      url,
      '--api-key',
      'free-demo-key',
      '--plan',
      'free',
      '--plans',
      join(dir, 'plans.json'),
      '--out',
      out,
      ...extra,
    ],
    200_000,
  );
  const r = readJson(join(out, 'result.json')) as RunResult;
  const c = r.compliance;
  const notes = o.stdout.split('\n').filter((l) => /unexplained|after admissions|quota:/.test(l));
  return {
    code: o.code,
    requests: r.overall.requests,
    rateLimited: c.rateLimited,
    refusals: c.refusals,
    unexplained: c.unexplained,
    util: Math.round(c.quotaUtilization * 1000) / 1000,
    violations: c.violations,
    refusalIs429: r.checks.find((x) => x.id === 'refusal-is-429')?.failures,
    notes,
  };
}
async function cap(url: string, windows: { name: string; limit: number; seconds: number }[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cap-'));
  writeFileSync(join(dir, 'plans.json'), JSON.stringify({ free: { windows } }));
  const started = Date.now();
  const outcome = await runCli(
    [
      'capacity',
      '--base-url',
      url,
      '--api-key',
      'free=free-demo-key',
      '--plans',
      join(dir, 'plans.json'),
      '--out',
      join(dir, 'out'),
    ],
    400_000,
  );
  const result = readJson(join(dir, 'out', 'result.json')) as RunResult;
  const c = { outcome, elapsedMs: Date.now() - started, report: result.capacity?.[0] };
  const l = c.report?.limiter;
  return {
    code: c.outcome.code,
    s: Math.round(c.elapsedMs / 1000),
    type: l?.type,
    sustained: l?.sustainedPerSecond,
    burst: l?.burst,
    window: l?.window,
    windows: l?.windows?.map((w) => `${w.limit}/${w.seconds}s ${w.type} ${w.measured}`),
    block: l?.block,
    check: l?.check,
    refusalStatus: l?.refusalStatus,
    verdict: c.report?.verdict,
    reasons: c.report?.reasons,
  };
}
const log = (name: string) => (x: unknown) => console.log('ACC', name, JSON.stringify(x));

it('acceptance', async () => {
  const upstream = await startServer({ rateLimit: false, seedData: 3 });
  const u = upstream.url;
  const nginx = () =>
    startNginxLimitReq({
      upstream: u,
      rate: '60r/m',
      status: 'nginx-default',
      zoneKey: '$http_authorization',
    });
  const MIN = [{ name: 'minute', limit: 60, seconds: 60 }];
  const TEN = [{ name: 'ten', limit: 10, seconds: 10 }];
  const MOV = [
    { name: 'a', limit: 10, seconds: 10 },
    { name: 'b', limit: 20, seconds: 30 },
  ];
  const raw = ['--enforce', 'off', '--rate', '300%', '--duration', '30s'];
  const forbid = () => startForbiddingRateLimit({ upstream: u, limit: 10, windowMs: 10_000 });
  const moving = () =>
    startSlidingLog({
      upstream: u,
      windows: [
        { limit: 10, windowMs: 10_000 },
        { limit: 20, windowMs: 30_000 },
      ],
    });
  const only = (process.env.ONLY ?? '').split(',');
  const jobs = [
    () =>
      nginx()
        .then((l) => cliRun(l.url, MIN, ['--duration', '60s']))
        .then(log('nginx paced 60s')),
    () =>
      nginx()
        .then((l) => cliRun(l.url, MIN, ['--duration', '60s', '--limiter', 'gcra']))
        .then(log('nginx paced 60s --limiter gcra')),
    () =>
      nginx()
        .then((l) => cliRun(l.url, MIN, raw))
        .then(log('nginx raw 3x 30s')),
    () =>
      nginx()
        .then((l) => cliRun(l.url, MIN, [...raw, '--refusal-status', '503']))
        .then(log('nginx raw 3x 30s --refusal-status 503')),
    () =>
      nginx()
        .then((l) => cap(l.url, MIN))
        .then(log('nginx capacity')),
    () =>
      forbid()
        .then((l) => cliRun(l.url, TEN, raw))
        .then(log('403 raw 3x 30s')),
    () =>
      forbid()
        .then((l) => cap(l.url, TEN))
        .then(log('403 capacity')),
    () =>
      moving()
        .then((l) => cap(l.url, MOV))
        .then(log('moving capacity')),
    () =>
      moving()
        .then((l) => cliRun(l.url, MOV, ['--duration', '90s']))
        .then(log('moving paced 90s')),
    () =>
      startVarnishThrottle({ upstream: u, limit: 10, periodS: 10, blockS: 30 })
        .then((l) => cap(l.url, TEN))
        .then(log('varnish capacity')),
  ];
  await Promise.all(jobs.filter((_, i) => only[0] === '' || only.includes(String(i))).map((j) => j()));
  await upstream.close();
}, 600_000);
