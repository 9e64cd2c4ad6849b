/**
 * bench:server: the reference server's throughput on getPetById with the enterprise key, with the rate
 * limiter on and off, measured side by side in alternating rounds (the machine is shared and noisy:
 * only medians and their ratio mean anything). The limiter runs with limits so high it never rejects,
 * so the figure is its cost, not the effect of 429s.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { spawnServer } from '../src/cli/embedded-server.ts';
import { writeFileAtomic } from '../src/io/atomic-write.ts';
import { median, writeBenchReport } from './report.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

const dir = mkdtempSync(join(tmpdir(), 'bench-server-'));
const plans = join(dir, 'plans.json');
writeFileAtomic(plans, JSON.stringify({ enterprise: { perMinute: 1_000_000_000, perDay: 1_000_000_000 } }));

const sides = {
  on: await spawnServer(['--plans', plans]),
  off: await spawnServer(['--plans', plans, '--no-rate-limit']),
};
type Side = keyof typeof sides;
const samples: Record<Side, { rps: number; p50: number; p99: number; non2xx: number; errors: number }[]> = {
  on: [],
  off: [],
};

try {
  console.log(
    `getPetById, enterprise key, ${connections} connections, ${rounds} rounds of ${duration} s per side`,
  );
  // A warm-up run per side, discarded: the first seconds measure the JIT, not the limiter.
  for (const side of ['on', 'off'] as const) {
    await autocannon({
      url: `${sides[side].url}/pets/1`,
      connections,
      duration: 2,
      headers: { authorization: 'Bearer enterprise-demo-key' },
    });
  }
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first so that drift in machine load does not favour one.
    const order: Side[] = round % 2 ? ['off', 'on'] : ['on', 'off'];
    for (const side of order) {
      const result = await autocannon({
        url: `${sides[side].url}/pets/1`,
        connections,
        duration,
        headers: { authorization: 'Bearer enterprise-demo-key' },
      });
      const sample = {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors,
      };
      samples[side].push(sample);
      console.log(
        `round ${round + 1} limiting ${side.padEnd(3)}: ${sample.rps.toFixed(0)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, non-2xx ${sample.non2xx}`,
      );
    }
  }
} finally {
  await Promise.all([sides.on.stop(), sides.off.stop()]);
}

const summary = Object.fromEntries(
  (['on', 'off'] as const).map((side) => [
    side,
    { rps: median(samples[side].map((s) => s.rps)), p99: median(samples[side].map((s) => s.p99)) },
  ]),
) as Record<Side, { rps: number; p99: number }>;
const ratio = summary.on.rps / summary.off.rps;
console.log(
  `\nmedian req/s  limiting on: ${summary.on.rps.toFixed(0)}   limiting off: ${summary.off.rps.toFixed(0)}`,
);
console.log(
  `ratio on/off: ${ratio.toFixed(3)} (the limiter costs ${((1 - ratio) * 100).toFixed(1)}% of throughput)`,
);
const bad = [...samples.on, ...samples.off].reduce((n, s) => n + s.non2xx + s.errors, 0);
if (bad > 0) console.log(`warning: ${bad} non-2xx responses or errors; the figures include them`);
console.log(
  `written ${writeBenchReport('bench-server', { connections, duration, rounds, samples, summary, ratio })}`,
);
