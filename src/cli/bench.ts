import { basename, dirname, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { DEMO_KEYS } from '../api/demo-keys.ts';
import { EXIT } from '../api/exit-codes.ts';
import { InputError } from '../api/input-error.ts';
import type { Operation } from '../api/operations.ts';
import { getPlan, type RateWindow } from '../api/plans.ts';
import type { BenchProgress } from '../bench/bench-run.ts';
import { markRateLimited } from '../bench/rate-limit-warning.ts';
import { buildCycle } from '../bench/request-cycle.ts';
import type { BenchSettings } from '../bench/settings.ts';
import { type Prepared, prepareBench } from '../bench/setup.ts';
import { benchAll, totalConnections } from '../bench/threads.ts';
import { unlimitedPlansFile } from '../bench/unlimited-plans.ts';
import { publicTarget } from '../config/base-url.ts';
import { type BenchArgs, type BenchConfig, benchOperations, resolveBenchConfig } from '../config/bench.ts';
import { BENCH_FLAGS } from '../config/bench-flags.ts';
import { configJson } from '../config/print.ts';
import { stopMetrics } from '../metrics/cli.ts';
import { LiveMetrics } from '../metrics/live-metrics.ts';
import { renderHtmlReport } from '../report/html.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import type { RunResult } from '../result/types.ts';
import type { RunTick } from '../scenario/execute.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { Interrupt } from './interrupt.ts';
import { ProgressLine } from './progress.ts';
import { reachable } from './reachable.ts';
import { failureLine, formatSummary } from './summary.ts';
import { writeForced, writeOutput, writeResultFile } from './write-output.ts';

export function benchOptions(yargs: Argv) {
  return yargs.options(BENCH_FLAGS);
}

/** Parse, resolve, (print,) execute, write outputs. */
export async function bench(args: BenchArgs): Promise<number> {
  // Everything the user typed is checked before a server starts or a request leaves.
  const config = await resolveBenchConfig(args);
  if (args.printConfig) {
    process.stdout.write(configJson(config));
    return EXIT.OK;
  }
  for (const warning of config.warnings) process.stderr.write(`petstore-load: ${warning}\n`);
  return executeBench(config);
}

/** What one execution holds that its cleanup must undo, whatever stage it reached. */
interface Held {
  plansFile: ReturnType<typeof unlimitedPlansFile> | undefined;
  operations?: Operation[];
  server?: ServerProcess;
  prepared?: Prepared;
  metrics?: LiveMetrics | undefined;
}

async function executeBench(config: BenchConfig): Promise<number> {
  const held: Held = { plansFile: config.embedded ? unlimitedPlansFile() : undefined };
  const killServer = () => held.server?.child.kill();
  process.once('exit', killServer);
  const interrupt = new Interrupt();
  const outputDir = (result: RunResult) =>
    resolve(config.out ?? join('reports', `bench-${result.meta.startedAt.replace(/[:.]/g, '-')}`));
  // A second Ctrl-C exits at once, with what every connection measured so far.
  let snapshot: (() => RunResult | undefined) | undefined;
  interrupt.onForce(() => writeForced(snapshot?.(), interrupt.by, outputDir, 'bench'));
  const progress = new ProgressLine();
  try {
    const settings = await setUp(config, held);
    if (interrupt.aborted) {
      process.stderr.write(
        `petstore-load: bench interrupted by ${interrupt.by} before it started: nothing measured\n`,
      );
      return EXIT.INTERRUPTED;
    }
    const result = await drive(config, settings, held, interrupt, progress, (take) => {
      snapshot = take;
    });
    return writeOutputs(config, result, outputDir(result));
  } finally {
    progress.clear();
    await stopMetrics(held.metrics, { interrupted: true, quiet: config.quiet });
    interrupt.release();
    // The embedded server takes what setup made with it; a real target gets it removed.
    if (held.prepared && !config.embedded) {
      const left = await held.prepared.teardown();
      if (left) process.stderr.write(`petstore-load: teardown: ${left}\n`);
    } else await held.prepared?.close();
    await held.server?.stop();
    process.removeListener('exit', killServer);
    held.plansFile?.remove();
  }
}

/** The target started or checked, the data setup makes, and the settings every thread drives with. */
async function setUp(config: BenchConfig, held: Held): Promise<BenchSettings> {
  let url = config.baseUrl;
  if (held.plansFile) {
    held.server = await spawnServer(['--plans', held.plansFile.path]);
    url = new URL(held.server.url);
  }
  if (url === undefined) throw new Error('bench: no target');
  const target = publicTarget(url);
  if (!config.embedded && !(await reachable(url)))
    throw new InputError(`target ${target} is unreachable`, EXIT.UNREACHABLE);
  const apiKey = config.apiKey.reveal();
  // The plan is known for the embedded server's keys only; a real target's is its own business.
  const planName = config.embedded ? (DEMO_KEYS[apiKey] ?? 'unknown') : 'unknown';
  const windows: RateWindow[] =
    held.plansFile && planName !== 'unknown' ? getPlan(held.plansFile.plans, planName).windows : [];
  const operations = benchOperations(config, [...config.operations]);
  held.operations = operations;
  try {
    held.prepared = await prepareBench({
      baseUrl: url.href,
      apiKey,
      plan: planName,
      windows,
      operations,
      mix: [...config.mix],
      timeoutMs: config.timeoutMs,
    });
  } catch (error) {
    const unreachable = !config.embedded && !(await reachable(url));
    throw new InputError((error as Error).message, unreachable ? EXIT.UNREACHABLE : EXIT.USAGE);
  }
  return {
    origin: url.origin,
    target,
    embeddedTarget: config.embedded,
    plan: planName,
    windows,
    mix: [...config.mix],
    cycle: buildCycle(
      [...config.mix],
      held.prepared.catalogue,
      new Map(operations.map((op) => [op.id, op])),
      url.pathname.replace(/\/$/, ''),
      apiKey,
    ),
    connections: config.connections,
    pipelining: config.pipelining,
    rate: config.rate,
    durationMs: config.durationMs,
    timeoutMs: config.timeoutMs,
    workers: config.workers,
  };
}

/** The benchmark itself: the status line, the live push, and the result once every thread ends. */
async function drive(
  config: BenchConfig,
  settings: BenchSettings,
  held: Held,
  interrupt: Interrupt,
  progress: ProgressLine,
  onSnapshot: (take: () => RunResult | undefined) => void,
): Promise<RunResult> {
  const { rate, quiet, durationMs } = config;
  const live = !quiet && progress.enabled;
  if (!quiet)
    process.stderr.write(
      `bench: ${settings.target}${config.embedded ? ' (embedded reference server, unlimited enterprise key)' : ''}, ${totalConnections(settings)} connections${rate === undefined ? ', flat out' : `, ${rate} requests/s`}, for ${config.duration}\n`,
    );
  // The run's identity on every series: never the key (the target without credentials).
  held.metrics =
    config.metrics &&
    new LiveMetrics({
      sinks: [...config.metrics.sinks],
      intervalMs: config.metrics.intervalMs,
      identity: { scenario: 'bench', target: settings.target, plan: settings.plan },
      windows: settings.windows,
    });
  const pushing = held.metrics;
  const startedAt = Date.now();
  let previous = 0;
  const result = await benchAll(settings, held.operations ?? [], {
    signal: interrupt.signal,
    interruptedBy: () => interrupt.by,
    onProgress: live
      ? (p: BenchProgress) => {
          progress.update(tickOf(p, p.requests - previous, Date.now() - startedAt, durationMs));
          previous = p.requests;
        }
      : undefined,
    onSnapshot,
    ...(pushing ? { onLive: (run) => pushing.start(run) } : {}),
  });
  progress.clear();
  // Before the result is written: the last push carries the final counters.
  await stopMetrics(held.metrics, { interrupted: interrupt.aborted, quiet });
  if (held.metrics) result.meta.runId = held.metrics.runId;
  return result;
}

/** result.json, report.html, the summary, and the exit code they come to. */
function writeOutputs(config: BenchConfig, result: RunResult, dir: string): number {
  // A benchmark held back by a rate limiter says so wherever it is read, quiet or not.
  const warning = markRateLimited(result);
  if (warning) process.stderr.write(`petstore-load: ${warning}\n`);
  if (config.thresholds.length > 0) result.thresholds = evaluateThresholds([...config.thresholds], result);

  let exitCode: number = result.meta.partial
    ? EXIT.INTERRUPTED
    : result.thresholds?.some((t) => !t.passed)
      ? EXIT.THRESHOLDS_FAILED
      : EXIT.OK;
  const { path, failed } = writeResultFile(dir, result, basename(dir));
  if (failed && exitCode === EXIT.OK) exitCode = EXIT.WRITE_FAILED;
  const reportPath = join(path ? dirname(path) : dir, 'report.html');
  const reported = writeOutput(reportPath, renderHtmlReport(result), 'report');
  if (!reported && exitCode === EXIT.OK) exitCode = EXIT.WRITE_FAILED;
  if (config.quiet) {
    if (path) console.log(path);
  } else {
    const o = result.overall;
    console.log(
      [
        `bench: ${o.requests} requests in ${result.meta.durationSeconds} s: ${o.rate.toFixed(1)} requests/s; response time p50 ${o.response.p50} ms, p99 ${o.response.p99} ms`,
        formatSummary(result, path),
        reported ? `report written to ${reportPath}` : '',
      ]
        .join('\n')
        .trimEnd(),
    );
  }
  const verdict = failureLine(result);
  if (verdict && exitCode === EXIT.THRESHOLDS_FAILED) process.stderr.write(`petstore-load: ${verdict}\n`);
  return exitCode;
}

/** The status line's figures, in the shape `run`'s status line takes. */
function tickOf(p: BenchProgress, lastSecond: number, elapsedMs: number, durationMs: number): RunTick {
  return {
    elapsedMs,
    durationMs,
    requests: p.requests,
    rate: lastSecond,
    rateLimited: p.rateLimited,
    errors: p.errors,
    p99Ms: p.p99Ms,
    pacing: { cause: 'ready', until: 0 },
    snapshot: () => {
      throw new Error('bench: no snapshot during the run');
    },
  };
}
