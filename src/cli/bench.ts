import { basename, dirname, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { DEMO_KEYS } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { getPlan } from '../api/plans.ts';
import { DEFAULT_SPEC_PATH, loadSpec } from '../api/spec.ts';
import type { BenchProgress } from '../bench/bench-run.ts';
import { DEFAULT_OPERATIONS, parseOperationMix } from '../bench/operation-mix.ts';
import { markRateLimited } from '../bench/rate-limit-warning.ts';
import { buildCycle } from '../bench/request-cycle.ts';
import type { BenchSettings } from '../bench/settings.ts';
import { type Prepared, prepareBench } from '../bench/setup.ts';
import { STEPS } from '../bench/steps.ts';
import { benchAll, totalConnections } from '../bench/threads.ts';
import { unlimitedPlansFile } from '../bench/unlimited-plans.ts';
import { metricsFlags, metricsOptions, stopMetrics } from '../metrics/cli.ts';
import { LiveMetrics } from '../metrics/live-metrics.ts';
import { renderHtmlReport } from '../report/html.ts';
import { evaluateThresholds } from '../report/threshold-evaluate.ts';
import { parseThreshold } from '../report/threshold-parse.ts';
import type { RunResult } from '../result/types.ts';
import type { RunTick } from '../scenario/execute.ts';
import { type ServerProcess, spawnServer } from './embedded-server.ts';
import { EXIT } from './exit-codes.ts';
import { Interrupt } from './interrupt.ts';
import { ProgressLine } from './progress.ts';
import { reachable } from './reachable.ts';
import { failureLine, formatSummary } from './summary.ts';
import { writeForced, writeOutput, writeResultFile } from './write-output.ts';

/** The key the embedded server gives an enterprise plan without limits (see unlimited-plans.ts). */
const EMBEDDED_KEY = 'enterprise-demo-key';
/** autocannon's default request timeout. */
const TIMEOUT_MS = 10_000;

export function benchOptions(yargs: Argv) {
  return metricsOptions(
    yargs
      .option('operations', {
        type: 'string',
        default: DEFAULT_OPERATIONS,
        describe: 'Operations of the table to send, each with an optional weight: getPetById,listPets:3',
      })
      .option('duration', { type: 'string', default: '10s', describe: 'How long, e.g. 10s, 2m' })
      .option('connections', { type: 'number', default: 10, describe: 'Concurrent connections' })
      .option('pipelining', { type: 'number', default: 1, describe: 'Requests in flight per connection' })
      .option('rate', {
        type: 'string',
        describe:
          'Fixed rate, requests per second over all connections (default: as fast as the target answers); latency is corrected for coordinated omission',
      })
      .option('workers', { type: 'number', default: 1, describe: 'Worker threads, each driving its share' })
      .option('base-url', {
        type: 'string',
        describe: 'Target; without it the reference server is started on 127.0.0.1 with an unlimited key',
      })
      .option('key', {
        type: 'string',
        describe:
          'API key (or env PETSTORE_API_KEY); never printed or written. Wants an unlimited or enterprise plan',
      })
      .option('threshold', {
        type: 'string',
        array: true,
        describe:
          "Pass/fail criterion, repeatable, as for run: 'p99<50ms', 'rps>=5000', 'errors<0.1%', 'rate_limited==0'",
      })
      .option('out', {
        type: 'string',
        describe: 'Directory for result.json and report.html (default reports/bench-<time>/)',
      })
      .option('quiet', {
        type: 'boolean',
        default: false,
        describe: 'No status line and no summary: only the result path',
      })
      .requiresArg([
        'operations',
        'duration',
        'connections',
        'pipelining',
        'rate',
        'workers',
        'base-url',
        'key',
        'threshold',
        'out',
      ]),
  );
}

type BenchArgs = Awaited<ReturnType<typeof benchOptions>['argv']>;

function wholeNumber(value: number, flag: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InputError(`--${flag}: expected a whole number from ${min} to ${max}, got ${value}`);
  return value;
}

function parseRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const rate = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(rate) || rate < 1)
    throw new InputError(
      `--rate: '${text}' is not a rate (a whole number of requests per second, at least 1)`,
    );
  return rate;
}

/** Base URL without credentials, query or fragment: what a result and a message may show. */
function publicTarget(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
}

export async function bench(args: BenchArgs): Promise<number> {
  // Everything the user typed is checked before a server starts or a request leaves.
  const spec = await loadSpec(DEFAULT_SPEC_PATH);
  const ids = spec.operations.map((op) => op.id);
  const mix = parseOperationMix(
    args.operations,
    ids.filter((id) => id in STEPS),
  );
  const durationMs = parseDuration(args.duration, '--duration');
  if (durationMs < 100) throw new InputError(`--duration: '${args.duration}' is too short (at least 100ms)`);
  const connections = wholeNumber(args.connections, 'connections', 1, 10_000);
  const pipelining = wholeNumber(args.pipelining, 'pipelining', 1, 1000);
  const workers = wholeNumber(args.workers, 'workers', 1, connections);
  const rate = parseRate(args.rate);
  if (rate !== undefined && rate < workers)
    throw new InputError(`--rate ${rate} cannot be shared by ${workers} workers (at least 1 request/s each)`);
  if (rate !== undefined && pipelining > 1)
    throw new InputError(
      "--pipelining with --rate: autocannon's rate limiter resumes one request per connection after each pause, so pipelining would silently fall to 1",
    );
  const chained = mix.filter((e) => STEPS[e.operationId]?.consumes !== undefined).map((e) => e.operationId);
  if (chained.length > 0 && pipelining > 1)
    throw new InputError(
      `--pipelining ${pipelining}: ${chained.join(', ')} use what the request before them on their connection created, which needs --pipelining 1`,
    );
  const thresholds = (args.threshold ?? []).map((t) => parseThreshold(t, 'cli', new Set(ids)));
  const metricsSetup = metricsFlags({ ...args, workers: 1 });
  // Each worker thread records into a recorder of its own that this thread cannot read while it
  // runs (it sees their progress counts only, and their results once they end): refused, as run does.
  if (metricsSetup && workers > 1)
    throw new InputError(
      '--metrics pushes the figures of one thread: it cannot be used with --workers yet (run one bench process per worker instead)',
    );
  const embedded = args.baseUrl === undefined;
  let baseUrl: URL | undefined;
  if (!embedded) {
    try {
      baseUrl = new URL(args.baseUrl as string);
    } catch {
      throw new InputError(`--base-url: '${args.baseUrl}' is not a URL`);
    }
    if (!/^https?:$/.test(baseUrl.protocol)) throw new InputError('--base-url must be http:// or https://');
  }
  // PETSTORE_API_KEY is a real target's key: the embedded server knows only its demo keys.
  const apiKey = args.key ?? (embedded ? EMBEDDED_KEY : process.env.PETSTORE_API_KEY);
  if (apiKey === undefined) throw new InputError('--base-url needs --key KEY (or PETSTORE_API_KEY)');

  const plansFile = embedded ? unlimitedPlansFile() : undefined;
  let server: ServerProcess | undefined;
  const killServer = () => server?.child.kill();
  process.once('exit', killServer);
  const interrupt = new Interrupt();
  const outputDir = (result: RunResult) =>
    resolve(args.out ?? join('reports', `bench-${result.meta.startedAt.replace(/[:.]/g, '-')}`));
  // A second Ctrl-C exits at once, with what every connection measured so far.
  let snapshot: (() => RunResult | undefined) | undefined;
  interrupt.onForce(() => writeForced(snapshot?.(), interrupt.by, outputDir, 'bench'));
  const progress = new ProgressLine();
  let prepared: Prepared | undefined;
  let metrics: LiveMetrics | undefined;
  try {
    if (plansFile) {
      server = await spawnServer(['--plans', plansFile.path]);
      baseUrl = new URL(server.url);
    }
    const url = baseUrl as URL;
    const target = publicTarget(url);
    if (!embedded && !(await reachable(url)))
      throw new InputError(`target ${target} is unreachable`, EXIT.UNREACHABLE);
    // The plan is known for the embedded server's keys only; a real target's is its own business.
    const planName = embedded ? (DEMO_KEYS[apiKey] ?? 'unknown') : 'unknown';
    const windows = plansFile && planName !== 'unknown' ? getPlan(plansFile.plans, planName).windows : [];
    const headers = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };
    try {
      prepared = await prepareBench({
        baseUrl: url.href,
        apiKey,
        plan: planName,
        windows,
        operations: spec.operations,
        mix,
        timeoutMs: TIMEOUT_MS,
      });
    } catch (error) {
      const unreachable = !embedded && !(await reachable(url));
      throw new InputError((error as Error).message, unreachable ? EXIT.UNREACHABLE : EXIT.USAGE);
    }
    if (interrupt.aborted) {
      process.stderr.write(
        `petstore-load: bench interrupted by ${interrupt.by} before it started: nothing measured\n`,
      );
      return EXIT.INTERRUPTED;
    }
    const settings: BenchSettings = {
      origin: url.origin,
      target,
      embeddedTarget: embedded,
      plan: planName,
      windows,
      mix,
      cycle: buildCycle(
        mix,
        prepared.catalogue,
        new Map(spec.operations.map((op) => [op.id, op])),
        url.pathname.replace(/\/$/, ''),
      ),
      headers,
      connections,
      pipelining,
      rate,
      durationMs,
      timeoutMs: TIMEOUT_MS,
      workers,
    };
    const live = !args.quiet && progress.enabled;
    if (!args.quiet)
      process.stderr.write(
        `bench: ${target}${embedded ? ' (embedded reference server, unlimited enterprise key)' : ''}, ${totalConnections(settings)} connections${rate === undefined ? ', flat out' : `, ${rate} requests/s`}, for ${args.duration}\n`,
      );
    // The run's identity on every series: never the key (the target without credentials).
    metrics =
      metricsSetup &&
      new LiveMetrics({
        ...metricsSetup,
        identity: { scenario: 'bench', target, plan: planName },
        windows,
      });
    const pushing = metrics;
    const startedAt = Date.now();
    let previous = 0;
    const result = await benchAll(settings, spec.operations, {
      signal: interrupt.signal,
      interruptedBy: () => interrupt.by,
      onProgress: live
        ? (p: BenchProgress) => {
            progress.update(tickOf(p, p.requests - previous, Date.now() - startedAt, durationMs));
            previous = p.requests;
          }
        : undefined,
      onSnapshot: (take) => {
        snapshot = take;
      },
      ...(pushing ? { onLive: (run) => pushing.start(run) } : {}),
    });
    progress.clear();
    // Before the result is written: the last push carries the final counters.
    await stopMetrics(metrics, { interrupted: interrupt.aborted, quiet: args.quiet });
    if (metrics) result.meta.runId = metrics.runId;

    // A benchmark held back by a rate limiter says so wherever it is read, quiet or not.
    const warning = markRateLimited(result);
    if (warning) process.stderr.write(`petstore-load: ${warning}\n`);
    if (thresholds.length > 0) result.thresholds = evaluateThresholds(thresholds, result);

    const dir = outputDir(result);
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
    if (args.quiet) {
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
  } finally {
    progress.clear();
    await stopMetrics(metrics, { interrupted: true, quiet: args.quiet });
    interrupt.release();
    // The embedded server takes what setup made with it; a real target gets it removed.
    if (prepared && !embedded) {
      const left = await prepared.teardown();
      if (left) process.stderr.write(`petstore-load: teardown: ${left}\n`);
    } else await prepared?.close();
    await server?.stop();
    process.removeListener('exit', killServer);
    plansFile?.remove();
  }
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
