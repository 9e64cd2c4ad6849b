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
import { configJson } from '../config/print.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import type { RunResult } from '../result/types.ts';
import { NoAnswerError } from '../scenario/catalogue.ts';
import type { RunTick } from '../scenario/execute.ts';
import { type NetworkOptions, type TlsOptions, tlsOptions } from '../transport/network.ts';
import { spawnServer } from './embedded-server.ts';
import { checkReachable, reachable } from './reachable.ts';
import { exitCodeOf, type Session, withSession } from './session.ts';
import { failureLine, formatSummary } from './summary.ts';
import { checkOutputDir, writeResultAndReportTo } from './write-output.ts';

/** Parse, resolve, (print,) execute, write outputs. */
export async function bench(args: BenchArgs): Promise<number> {
  // Everything the user typed is checked before a server starts or a request leaves.
  const config = await resolveBenchConfig(args);
  if (args.printConfig) {
    process.stdout.write(configJson(config));
    return EXIT.OK;
  }
  for (const warning of config.warnings) process.stderr.write(`petstore-load: ${warning}\n`);
  checkOutputDir(config.out);
  return executeBench(config);
}

type BenchOutputs = ReturnType<typeof writeResultAndReportTo>;

/** The target, the data setup made on it, and what the threads drive with, in the bench's session. */
function executeBench(config: BenchConfig): Promise<number> {
  const write = (result: RunResult) => writeResultAndReportTo(config.out, 'bench', result);
  return withSession({ label: 'bench', quiet: config.quiet, write }, async (session) => {
    const { settings, operations } = await setUp(config, session);
    if (session.stoppedEarly()) return EXIT.INTERRUPTED;
    const result = await drive(config, settings, operations, session);
    return writeOutputs(config, result, session);
  });
}

/** The embedded server started (or the target checked), the data setup makes, and the settings every thread drives with. */
async function setUp(
  config: BenchConfig,
  session: Session<BenchOutputs>,
): Promise<{ settings: BenchSettings; operations: Operation[] }> {
  let url = config.baseUrl;
  const plansFile = config.embedded ? unlimitedPlansFile() : undefined;
  if (plansFile) {
    session.defer(() => plansFile.remove());
    url = new URL(session.own(await spawnServer(['--plans', plansFile.path])).url);
  }
  if (url === undefined) throw new Error('bench: no target');
  const target = publicTarget(url);
  const network = config.network.options;
  if (!config.embedded) await checkReachable(url, network, target);
  const apiKey = config.apiKey.reveal();
  // The plan is known for the embedded server's keys only; a real target's is its own business.
  const planName = config.embedded ? (DEMO_KEYS[apiKey] ?? 'unknown') : 'unknown';
  const windows: RateWindow[] =
    plansFile && planName !== 'unknown' ? getPlan(plansFile.plans, planName).windows : [];
  const operations = benchOperations(config, [...config.operations]);
  const prepared = await prepare(config, session, {
    baseUrl: url.href,
    apiKey,
    plan: planName,
    windows,
    operations,
    mix: [...config.mix],
    timeoutMs: config.timeoutMs,
    network,
  });
  const settings: BenchSettings = {
    origin: url.origin,
    target,
    embeddedTarget: config.embedded,
    plan: planName,
    windows,
    mix: [...config.mix],
    cycle: buildCycle(
      [...config.mix],
      prepared.catalogue,
      new Map(operations.map((op) => [op.id, op])),
      url.pathname.replace(/\/$/, ''),
      apiKey,
    ),
    connections: config.connections,
    pipelining: config.pipelining,
    rate: config.rate,
    durationMs: config.durationMs,
    refusalStatuses: config.refusalStatuses,
    timeoutMs: config.timeoutMs,
    workers: config.workers,
    tls: autocannonTls(network),
  };
  return { settings, operations };
}

/** What autocannon takes of the TLS options: the client certificate (it verifies no server's). */
function autocannonTls(network: NetworkOptions | undefined): TlsOptions | undefined {
  const tls = tlsOptions(network);
  if (!tls?.cert) return undefined;
  const { cert, key, passphrase } = tls;
  return { cert, ...(key ? { key } : {}), ...(passphrase !== undefined ? { passphrase } : {}) };
}

/** The data the benchmark reads, made before it starts and undone when the session closes. */
async function prepare(
  config: BenchConfig,
  session: Session<BenchOutputs>,
  input: Parameters<typeof prepareBench>[0],
): Promise<Prepared> {
  let prepared: Prepared;
  try {
    prepared = await prepareBench(input);
  } catch (error) {
    // No answer at all (a client certificate the target wants) is as unreachable as a refused connection.
    const unreachable =
      error instanceof NoAnswerError ||
      (!config.embedded && !(await reachable(new URL(input.baseUrl), input.network)));
    throw new InputError((error as Error).message, unreachable ? EXIT.UNREACHABLE : EXIT.USAGE);
  }
  session.defer(async () => {
    // The embedded server takes what setup made with it; a real target gets it removed.
    if (config.embedded) return prepared.close();
    const left = await prepared.teardown();
    if (left) process.stderr.write(`petstore-load: teardown: ${left}\n`);
  });
  return prepared;
}

/** The benchmark itself: the status line, the live push, and the result once every thread ends. */
async function drive(
  config: BenchConfig,
  settings: BenchSettings,
  operations: Operation[],
  session: Session<BenchOutputs>,
): Promise<RunResult> {
  const { rate, quiet, durationMs } = config;
  const { interrupt, progress } = session;
  const live = !quiet && progress.enabled;
  if (!quiet)
    process.stderr.write(
      `bench: ${settings.target}${config.embedded ? ' (embedded reference server, unlimited enterprise key)' : ''}, ${totalConnections(settings)} connections${rate === undefined ? ', flat out' : `, ${rate} requests/s`}, for ${config.duration}\n`,
    );
  // The run's identity on every series: never the key (the target without credentials).
  const pushing = await session.useMetrics(
    config.metrics && {
      sinks: [...config.metrics.sinks],
      intervalMs: config.metrics.intervalMs,
      identity: { scenario: 'bench', target: settings.target, plan: settings.plan },
      windows: settings.windows,
    },
  );
  const startedAt = Date.now();
  let previous = 0;
  const result = await benchAll(settings, operations, {
    signal: interrupt.signal,
    interruptedBy: () => interrupt.by,
    onProgress: live
      ? (p: BenchProgress) => {
          progress.update(tickOf(p, p.requests - previous, Date.now() - startedAt, durationMs));
          previous = p.requests;
        }
      : undefined,
    // A second Ctrl-C exits at once, with what every connection measured so far.
    onSnapshot: session.onSnapshot,
    ...(pushing ? { onLive: (run) => pushing.start(run) } : {}),
  });
  await session.endMeasuring(result);
  return result;
}

/** result.json, report.html, the summary, and the exit code they come to. */
function writeOutputs(config: BenchConfig, result: RunResult, session: Session<BenchOutputs>): number {
  // A benchmark held back by a rate limiter says so wherever it is read, quiet or not.
  const warning = markRateLimited(result);
  if (warning) process.stderr.write(`petstore-load: ${warning}\n`);
  if (config.thresholds.length > 0) result.thresholds = evaluateThresholds([...config.thresholds], result);
  const { path, report, failed } = session.write(result);
  const exitCode = exitCodeOf({
    interrupted: result.meta.partial,
    failure: result.thresholds?.some((t) => !t.passed) ? EXIT.THRESHOLDS_FAILED : undefined,
    writeFailed: failed,
  });
  if (config.quiet) {
    if (path) console.log(path);
  } else {
    const o = result.overall;
    console.log(
      [
        `bench: ${o.requests} requests in ${result.meta.durationSeconds} s: ${o.rate.toFixed(1)} requests/s; response time p50 ${o.response.p50} ms, p99 ${o.response.p99} ms`,
        formatSummary(result, path),
        report ? `report written to ${report}` : '',
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
