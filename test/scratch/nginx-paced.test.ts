import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import type { RunResult } from '../../src/result/types.ts';
import { startServer } from '../../src/server/index.ts';
import { readJson, runCli } from '../helpers/integration-cli.ts';
import { startNginxLimitReq } from '../helpers/limiters.ts';

it('nginx paced', async () => {
  const upstream = await startServer({ rateLimit: false, seedData: 3 });
  const l = await startNginxLimitReq({
    upstream: upstream.url,
    rate: '60r/m',
    status: 'nginx-default',
    zoneKey: '$http_authorization',
  });
  const dir = mkdtempSync(join(tmpdir(), 'acc-'));
  writeFileSync(
    join(dir, 'plans.json'),
    JSON.stringify({ free: { windows: [{ name: 'minute', limit: 60, seconds: 60 }] } }),
  );
  const out = join(dir, 'out');
  const scenario = process.env.SCEN ?? 'mixed-traffic';
  const o = await runCli(
    [
      'run',
      scenario,
      '--base-url',
      l.url,
      '--api-key',
      'free-demo-key',
      '--plan',
      'free',
      '--plans',
      join(dir, 'plans.json'),
      '--out',
      out,
      '--duration',
      '20s',
      ...(process.env.EXTRA ? process.env.EXTRA.split(' ') : []),
    ],
    200_000,
  );
  const r = readJson(join(out, 'result.json')) as RunResult;
  console.log(o.stdout);
  console.log(JSON.stringify(r.timeline.filter((p) => p.errors > 0 || p.rateLimited > 0)));
  console.log(JSON.stringify(r.workload), JSON.stringify(r.compliance.limiter));
  await l.stop();
  await upstream.close();
}, 300_000);
