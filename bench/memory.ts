/**
 * bench:memory: peak RSS of `run` and the size of its result as a run grows. A small and a large run
 * of getPetById (closed model, bounded by iterations, enterprise key with limits that never bind, the
 * reference server in its own process), each in a child process of its own so that its peak RSS is
 * that run's alone: the histograms, timeline and checks must not grow with the requests, nor may the
 * result JSON. The child (src/bench/memory-child.ts, run from build/ as the CLI runs) writes the
 * result with writeResult into a temporary directory and stats it.
 */
import { fileURLToPath } from 'node:url';
import type { ChildReport } from '../src/bench/memory-child.ts';
import { type ServerProcess, spawnServer } from '../src/cli/embedded-server.ts';
import { forkReport, stopOnExit, unlimitedPlansFile } from './harness.ts';
import { writeBenchReport } from './report.ts';

const small = Number(process.env.BENCH_SMALL ?? 100_000);
const large = Number(process.env.BENCH_LARGE ?? 1_000_000);
const vus = Number(process.env.BENCH_VUS ?? 16);
/** A bound on time as well, so that a run on a stalled machine still ends by itself. */
const maxSeconds = Number(process.env.BENCH_MAX_SECONDS ?? 1800);
/**
 * BENCH_LIVE_HEAP=1: a full GC every 10 s of each run and the live heap after it, the largest kept.
 * Peak RSS includes whatever garbage V8 chose not to collect yet; the live heap shows what the run
 * really retains, so it tells a leak from GC slack. The forced GCs lower the peak RSS: a diagnosis,
 * not the figures to quote.
 */
const liveHeap = process.env.BENCH_LIVE_HEAP === '1';
const CHILD = fileURLToPath(new URL('./memory-child.mjs', import.meta.url));

const MAX_RSS_MB = 150;
const MAX_RESULT_MB = 2;
/** "Flat": the large run's peak RSS at most this many times the small one's (our bar; the brief names none). */
const MAX_RSS_GROWTH = 1.25;

const mb = (bytes: number) => bytes / 1024 / 1024;

/**
 * Runs one child and waits for its report: src/bench/memory-child.ts, from build/ as the CLI runs
 * (bench/memory-child.mjs picks it), so that its peak RSS is the pipeline's, not a TypeScript
 * loader's (tsx's hooks thread on Node 20, Node's own stripper on 26).
 */
function runChild(url: string, plansPath: string, iterations: number): Promise<ChildReport> {
  return forkReport<ChildReport>(
    CHILD,
    [url, plansPath, String(iterations), String(vus), String(maxSeconds), liveHeap ? '1' : '0'],
    `of ${iterations} iterations`,
    { execArgv: liveHeap ? ['--expose-gc'] : [] },
  );
}

const { path: plansPath } = unlimitedPlansFile();
const servers: ServerProcess[] = [];
const stopServers = stopOnExit(servers);
const reports: ChildReport[] = [];
try {
  const server = await spawnServer(['--plans', plansPath]);
  servers.push(server);
  console.log(
    `getPetById, closed model, ${vus} virtual users, ${small.toLocaleString('en')} then ${large.toLocaleString('en')} requests, each run in a child process of its own`,
  );
  for (const iterations of [small, large]) {
    console.log(`run of ${iterations.toLocaleString('en')} requests:`);
    const r = await runChild(server.url, plansPath, iterations);
    reports.push(r);
    console.log(
      `  done: ${r.requests} requests in ${r.seconds.toFixed(1)} s (${r.rps.toFixed(0)} req/s), peak RSS ${r.peakRssMb.toFixed(1)} MB (at start ${r.rssBeforeMb.toFixed(1)} MB), result ${(r.resultBytes / 1024).toFixed(1)} KiB`,
    );
  }
} finally {
  await stopServers();
}

const [a, b] = reports as [ChildReport, ChildReport];
const growth = b.peakRssMb / a.peakRssMb;
/** What each request beyond the small run's added to the peak: 0 for a run whose memory is flat. */
const bytesPerRequest = ((b.peakRssMb - a.peakRssMb) * 1024 * 1024) / (b.requests - a.requests);
const rssMet = Math.max(a.peakRssMb, b.peakRssMb) <= MAX_RSS_MB;
const flatMet = growth <= MAX_RSS_GROWTH;
const resultMet = mb(Math.max(a.resultBytes, b.resultBytes)) <= MAX_RESULT_MB;
const yes = (met: boolean) => (met ? 'met' : 'NOT MET');
console.log('');
console.log(
  `${'requests'.padStart(10)} ${'peak RSS'.padStart(10)} ${'after run'.padStart(10)} ${'VmHWM'.padStart(10)} ${'at start'.padStart(10)} ${'result'.padStart(10)} ${'req/s'.padStart(8)}`,
);
for (const r of reports) {
  console.log(
    `${String(r.requests).padStart(10)} ${`${r.peakRssMb.toFixed(1)} MB`.padStart(10)} ${`${r.peakRssAfterRunMb.toFixed(1)} MB`.padStart(10)} ${`${r.vmHwmMb?.toFixed(1) ?? '-'} MB`.padStart(10)} ${`${r.rssBeforeMb.toFixed(1)} MB`.padStart(10)} ${`${(r.resultBytes / 1024).toFixed(1)} KiB`.padStart(10)} ${r.rps.toFixed(0).padStart(8)}`,
  );
}
if (liveHeap)
  console.log(
    `largest live heap sampled: ${reports.map((r) => `${r.liveHeapMb?.toFixed(1) ?? '-'} MB`).join(' and ')} (forced GCs: peak RSS lower than without)`,
  );
console.log(`peak RSS at most ${MAX_RSS_MB} MB: ${yes(rssMet)}`);
console.log(
  `peak RSS flat as the run grows ${(b.requests / a.requests).toFixed(0)}x: ratio ${growth.toFixed(3)} (at most ${MAX_RSS_GROWTH}), ${bytesPerRequest.toFixed(0)} bytes per extra request: ${yes(flatMet)}`,
);
console.log(`result JSON at most ${MAX_RESULT_MB} MB: ${yes(resultMet)}`);
console.log(
  `written ${writeBenchReport('bench-memory', {
    vus,
    runs: reports,
    liveHeap,
    rssGrowth: growth,
    bytesPerRequest,
    targets: {
      maxRssMb: MAX_RSS_MB,
      maxRssGrowth: MAX_RSS_GROWTH,
      maxResultMb: MAX_RESULT_MB,
      rssMet,
      flatMet,
      resultMet,
    },
  })}`,
);
