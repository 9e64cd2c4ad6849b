import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitWithParent } from '../api/exit-with-parent.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../api/plans.ts';
import { loadSpec } from '../api/spec.ts';
import { writeResult } from '../result/write.ts';
import { runFlowObserved } from './run-flow.ts';

// bench:memory's child (bench/memory-child.mjs starts it, from build/ when it is fresh, as the CLI
// runs): one run of getPetById, bounded by iterations, whose peak RSS is its own. Its arguments:
// URL PLANS_FILE ITERATIONS VUS MAX_SECONDS LIVE_HEAP(0|1). It reports to its parent over IPC, and
// ends with it.

/** What the child tells bench/memory.ts. */
export interface ChildReport {
  iterations: number;
  requests: number;
  non2xx: number;
  seconds: number;
  rps: number;
  rssBeforeMb: number;
  peakRssMb: number;
  /** maxRSS when the run had ended, before the result was serialised and written. */
  peakRssAfterRunMb: number;
  vmHwmMb: number | undefined;
  heapUsedMb: number;
  /** BENCH_LIVE_HEAP=1: the largest live heap (after a full GC) sampled during the run. */
  liveHeapMb?: number;
  resultBytes: number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
/** VmHWM from /proc (Linux): the kernel's own peak resident set, the same figure as maxRSS. */
function vmHwmMb(): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The child: one run of `iterations` requests against `url`; reports to the parent over IPC. */
async function child(
  url: string,
  plansPath: string,
  iterations: number,
  o: { vus: number; maxSeconds: number; liveHeap: boolean },
): Promise<void> {
  const { vus, maxSeconds, liveHeap } = o;
  const plans = applyPlanOverrides(DEFAULT_PLANS, JSON.parse(readFileSync(plansPath, 'utf8')));
  const { operations } = await loadSpec();
  const rssBeforeMb = process.resourceUsage().maxRSS / 1024;
  const label = `[${iterations.toLocaleString('en')}]`;
  let lastPrint = 0;
  let liveHeapMb: number | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  const started = performance.now();
  const result = await runFlowObserved({
    url,
    plan: 'enterprise',
    plans,
    operations,
    workload: { executor: 'constant-vus', vus, iterations, duration: `${maxSeconds}s` },
    flow: { name: 'get-pet', run: async (api) => void (await api.getPetById(1)) },
    onTick: (tick) => {
      if (tick.elapsedMs - lastPrint < 10_000) return;
      lastPrint = tick.elapsedMs;
      let live = '';
      if (liveHeap && gc) {
        gc();
        const used = mb(process.memoryUsage().heapUsed);
        liveHeapMb = Math.max(liveHeapMb ?? 0, used);
        live = `, live heap ${used.toFixed(1)} MB`;
      }
      console.log(
        `  ${label} ${((tick.requests / iterations) * 100).toFixed(0).padStart(3)}%  ${tick.requests} requests, ${tick.rate.toFixed(0)} req/s, RSS ${mb(process.memoryUsage.rss()).toFixed(0)} MB${live}`,
      );
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const peakRssAfterRunMb = process.resourceUsage().maxRSS / 1024;
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  try {
    const path = writeResult(dir, result);
    const report: ChildReport = {
      iterations,
      requests: result.overall.requests,
      non2xx: Object.entries(result.overall.statuses)
        .filter(([status]) => status !== '200')
        .reduce((n, [, count]) => n + count, 0),
      seconds,
      rps: result.overall.requests / seconds,
      rssBeforeMb,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      peakRssAfterRunMb,
      vmHwmMb: vmHwmMb(),
      heapUsedMb: mb(process.memoryUsage().heapUsed),
      ...(liveHeapMb === undefined ? {} : { liveHeapMb }),
      resultBytes: statSync(path).size,
    };
    process.send?.(report);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.send) {
  exitWithParent();
  const [url, plansPath, iterations, vus, maxSeconds, liveHeap] = process.argv.slice(2);
  await child(url as string, plansPath as string, Number(iterations), {
    vus: Number(vus),
    maxSeconds: Number(maxSeconds),
    liveHeap: liveHeap === '1',
  });
  process.exit(0);
}
