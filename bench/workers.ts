/**
 * bench:workers: requests per second and CPU per request of `run --workers N` with 1 and 2 worker
 * threads, same target (getPetById on the reference server in its own process, enterprise key with
 * limits that never bind), same 16 virtual users in all, in rotating order after a warm-up of each.
 * The CPU is the generator process's (all its threads); the server's is not counted. On a machine
 * with 2 cores the server needs one of them: 2 workers can only show what a third core would buy
 * elsewhere, so the figures to read are the ratios beside the core count.
 */
import { cpus } from 'node:os';
import { cpuUsage } from 'node:process';
import { fileURLToPath } from 'node:url';
import { getPlan, planRate, scalePlan } from '../src/api/plans.ts';
import { loadSpec } from '../src/api/spec.ts';
import { spawnServer } from '../src/cli/embedded-server.ts';
import { runWorkers } from '../src/scenario/workers.ts';
import { stopOnExit, unlimitedPlansFile } from './harness.ts';
import { median, writeBenchReport } from './report.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const durationMs = Number(process.env.BENCH_DURATION ?? 5) * 1000;
const vus = Number(process.env.BENCH_VUS ?? 16);
const counts = [1, 2];

const { path: plansPath, plans } = unlimitedPlansFile();
const server = await spawnServer(['--plans', plansPath]);
const release = stopOnExit([server]);
const windows = scalePlan(getPlan(plans, 'enterprise'), 1).windows;
const scenarioPath = fileURLToPath(new URL('./throughput-scenario.ts', import.meta.url));
const { operations } = await loadSpec();

interface Sample {
  requests: number;
  rps: number;
  usPerRequest: number;
}
const samples: Record<number, Sample[]> = { 1: [], 2: [] };

/** CPU ms of a run with no workload: thread start-up, loading, setup and the merge. */
const fixedCpuMs: Record<number, number> = {};

async function measure(count: number, workloadMs = durationMs): Promise<Sample & { cpuMs: number }> {
  const cpuBefore = cpuUsage();
  const result = await runWorkers({
    count,
    job: {
      scenarioPath,
      operations,
      spec: 'built in',
      overrides: { durationMs: workloadMs, vus },
      planRate: planRate(windows),
      baseUrl: server.url,
      target: server.url,
      embeddedTarget: true,
      apiKey: 'enterprise-demo-key',
      plan: 'enterprise',
      windows,
      timeScale: 1,
      enforce: true,
      allowBanRisk: false,
      timeoutMs: 10_000,
      maxAttempts: 3,
      seed: 1,
      quota: { kind: 'port', key: 'bench' },
    },
  });
  const cpu = cpuUsage(cpuBefore);
  const requests = result.overall.requests;
  if (result.compliance.rateLimited > 0) console.warn(`  warning: ${result.compliance.rateLimited} 429s`);
  // Thread start-up, setup and the merge are in the CPU too: they are part of what --workers costs.
  const cpuMs = (cpu.user + cpu.system) / 1000;
  // Per request in steady state: the fixed cost of starting the threads is taken out.
  const steady = cpuMs - (fixedCpuMs[count] ?? 0);
  return {
    requests,
    rps: requests / (workloadMs / 1000),
    usPerRequest: requests > 0 ? (steady * 1000) / requests : 0,
    cpuMs,
  };
}

try {
  console.log(
    `bench:workers: ${cpus().length} cores; getPetById, ${vus} VUs, ${rounds} rounds of ${durationMs / 1000} s`,
  );
  for (const count of counts) await measure(count); // warm-up: JIT, the server's caches
  for (const count of counts) {
    const fixed = [await measure(count, 0), await measure(count, 0)].map((s) => s.cpuMs);
    fixedCpuMs[count] = median(fixed);
    console.log(
      `  ${count} worker(s): ${fixedCpuMs[count]?.toFixed(0)} ms CPU to start, set up and merge, not counted per request`,
    );
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? counts : [...counts].reverse();
    for (const count of order) {
      const s = await measure(count);
      samples[count]?.push(s);
      console.log(
        `  round ${round + 1}, ${count} worker(s): ${s.requests} requests, ${s.rps.toFixed(0)}/s, ${s.usPerRequest.toFixed(1)} µs CPU per request`,
      );
    }
  }
  const summary = Object.fromEntries(
    counts.map((count) => {
      const list = samples[count] ?? [];
      return [
        `workers${count}`,
        {
          rps: median(list.map((s) => s.rps)),
          usPerRequest: median(list.map((s) => s.usPerRequest)),
        },
      ];
    }),
  );
  const one = summary.workers1 as { rps: number; usPerRequest: number };
  const two = summary.workers2 as { rps: number; usPerRequest: number };
  const ratios = { rps: two.rps / one.rps, usPerRequest: two.usPerRequest / one.usPerRequest };
  console.log(
    `medians: 1 worker ${one.rps.toFixed(0)}/s at ${one.usPerRequest.toFixed(1)} µs/request; 2 workers ${two.rps.toFixed(0)}/s at ${two.usPerRequest.toFixed(1)} µs/request`,
  );
  console.log(
    `2 workers / 1: ${ratios.rps.toFixed(2)}x the rate, ${ratios.usPerRequest.toFixed(2)}x the CPU per request`,
  );
  const path = writeBenchReport('workers', { rounds, durationMs, vus, fixedCpuMs, samples, summary, ratios });
  console.log(`written to ${path}`);
} finally {
  await release();
  await server.stop();
}
