/**
 * bench:limiters: the client against real third-party limiters at their real rates, as the issue's
 * acceptance states them (the test suite runs the same at twice the rate, in less time):
 * - nginx `limit_req rate=60r/m` (a GCRA without burst, a bare 429), `run` at the plan rate for
 *   5 minutes: 429s, utilisation, violations, the gap learned;
 * - the same nginx in raw mode at 3x its rate for 60 s: 429s, requests while a pause held;
 * - express-rate-limit sending only the IETF draft-8 fields, the plan told twice its limit, for
 *   5 windows: 429s and the share of its real limit used.
 * Each limiter is the real component (Debian's nginx, the npm packages) on loopback, in front of the
 * reference server with its own limiter off.
 */
import type { RateWindow } from '../src/api/plans.ts';
import type { RunResult } from '../src/result/types.ts';
import type { Flow } from '../src/scenario/define.ts';
import { startServer } from '../src/server/index.ts';
import { startExpressRateLimit, startNginxLimitReq } from '../test/helpers/limiters.ts';
import { runFlow } from './harness.ts';
import { writeBenchReport } from './report.ts';

const pacedSeconds = Number(process.env.BENCH_PACED_S ?? 300);
const rawSeconds = Number(process.env.BENCH_RAW_S ?? 60);
const expressWindowSeconds = Number(process.env.BENCH_EXPRESS_WINDOW_S ?? 10);
const expressLimit = Number(process.env.BENCH_EXPRESS_LIMIT ?? 20);
const FREE: RateWindow[] = [{ name: 'minute', limit: 60, seconds: 60 }];
const flow: Flow<undefined> = { name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) };

const figures = (r: RunResult) => ({
  sent: r.overall.requests,
  admitted: r.overall.statuses['200'] ?? 0,
  rateLimited: r.overall.rateLimited,
  violations: r.compliance.violations,
  utilisation: r.compliance.quotaUtilization,
  limiter: r.compliance.limiter ?? null,
});

const upstream = await startServer({ rateLimit: false, seedData: 3 });
const nginxPaced = await startNginxLimitReq({ upstream: upstream.url, rate: '60r/m' });
const nginxRaw = await startNginxLimitReq({ upstream: upstream.url, rate: '60r/m' });
const express = await startExpressRateLimit({
  upstream: upstream.url,
  limit: expressLimit,
  windowMs: expressWindowSeconds * 1000,
  standardHeaders: 'draft-8',
  legacyHeaders: false,
});
console.log(
  `nginx 60r/m paced ${pacedSeconds} s, raw 3x ${rawSeconds} s; express-rate-limit draft-8 ${expressLimit} per ${expressWindowSeconds} s told ${2 * expressLimit}, 5 windows; side by side`,
);
try {
  const [paced, raw, ietf8] = await Promise.all([
    runFlow({
      url: nginxPaced.url,
      plan: 'free',
      windows: FREE,
      workload: { executor: 'constant-vus', vus: 4, duration: `${pacedSeconds}s` },
      flow,
    }),
    runFlow({
      url: nginxRaw.url,
      plan: 'free',
      windows: FREE,
      enforce: false,
      workload: {
        executor: 'constant-arrival-rate',
        rate: '300%',
        duration: `${rawSeconds}s`,
        maxInFlight: 8,
      },
      flow,
    }),
    runFlow({
      url: express.url,
      plan: 'free',
      windows: [{ name: 'window', limit: 2 * expressLimit, seconds: expressWindowSeconds }],
      workload: { executor: 'constant-vus', vus: 6, duration: `${5 * expressWindowSeconds}s` },
      flow,
    }),
  ]);
  const rows = {
    nginxPaced: figures(paced),
    nginxRaw3x: figures(raw),
    expressDraft8PlanTwice: {
      ...figures(ietf8),
      shareOfRealLimit: (ietf8.overall.statuses['200'] ?? 0) / (5 * expressLimit),
    },
  };
  console.table(
    Object.fromEntries(
      Object.entries(rows).map(([k, v]) => [
        k,
        { ...v, limiter: v.limiter ? JSON.stringify(v.limiter) : '' },
      ]),
    ),
  );
  console.log(writeBenchReport('limiters', rows));
} finally {
  await Promise.all([nginxPaced.stop(), nginxRaw.stop(), express.stop()]);
  await upstream.close();
}
