import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { capacityThroughCli } from '../helpers/capacity-cases.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import type { RunningLimiter } from '../helpers/limiters.ts';
import { startSlidingLog } from '../helpers/more-limiters.ts';

const MOVING = [
  { name: 'short', limit: 10, seconds: 3 },
  { name: 'long', limit: 20, seconds: 9 },
];
const N = Number(process.env.REPRO_N ?? 4);
const work = cliWorkspace('moving-repro');
let upstream: RunningServer;
const limiters: RunningLimiter[] = [];
const outs: Awaited<ReturnType<typeof capacityThroughCli>>[] = [];

beforeAll(async () => {
  upstream = await startServer({ rateLimit: false, seedData: 3 });
  await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const l = await startSlidingLog({
        upstream: upstream.url,
        windows: MOVING.map((w) => ({ limit: w.limit, windowMs: w.seconds * 1000 })),
      });
      limiters.push(l);
      outs[i] = await capacityThroughCli(l.url, MOVING, work.fresh(`m${i}`));
    }),
  );
}, 200_000);
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.stop()));
  await upstream?.close();
});
it('moving', () => {
  let bad = 0;
  outs.forEach((o, i) => {
    const long = o.report?.limiter.windows?.[1];
    const ok = long?.measured === true && long.limit === 20;
    if (!ok) bad++;
    writeFileSync(`/work/scratch/moving/out-${Date.now()}-${i}-${ok ? 'ok' : 'BAD'}.txt`, `${o.why}\n${JSON.stringify(o.report?.limiter, null, 1)}`);
  });
  expect(bad).toBe(0);
});
