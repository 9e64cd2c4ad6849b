/**
 * bench:pacing: utilisation and 429s when more virtual users than a plan admits run for several
 * windows against the reference server, per plan. Time-scaled so a run takes seconds, not minutes;
 * the guard margin grows with shorter windows, so real windows do at least as well as these.
 */
import { spawnServer } from '../src/cli/embedded-server.ts';
import { runFlow } from './harness.ts';
import { writeBenchReport } from './report.ts';

const timeScale = Number(process.env.BENCH_TIME_SCALE ?? 10);
const windows = Number(process.env.BENCH_WINDOWS ?? 5);
const plans = (process.env.BENCH_PLANS ?? 'free,pro').split(',');
const windowSeconds = 60 / timeScale;

const rows: Record<string, unknown>[] = [];
console.log(
  `time scale ${timeScale} (a minute window lasts ${windowSeconds} s), ${windows} windows per plan, 12 virtual users`,
);
for (const plan of plans) {
  // A fresh server per plan: no quota left over from the previous one.
  const server = await spawnServer(['--time-scale', String(timeScale)]);
  try {
    const result = await runFlow({
      url: server.url,
      plan,
      timeScale,
      workload: { executor: 'constant-vus', vus: 12, duration: `${windows * windowSeconds}s` },
      flow: { name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) },
    });
    const c = result.compliance;
    const row = {
      plan,
      windows: result.meta.durationSeconds / windowSeconds,
      admitted: c.admitted,
      planRate: c.planRate,
      utilisation: c.quotaUtilization,
      rateLimited: c.rateLimited,
      violations: c.violations,
    };
    rows.push(row);
    console.log(
      `${plan.padEnd(10)} ${row.windows.toFixed(1)} windows  admitted ${c.admitted}  utilisation ${(c.quotaUtilization * 100).toFixed(2)}%  429s ${c.rateLimited}  violations ${c.violations}`,
    );
  } finally {
    await server.stop();
  }
}
console.log(`written ${writeBenchReport('bench-pacing', { timeScale, windows, rows })}`);
