import type { Operation } from '../api/operations.ts';
import { TOOL_VERSION } from '../api/version.ts';
import { now } from '../client/clock.ts';
import { errorCount } from '../record/errors.ts';
import { Recorder } from '../record/recorder.ts';
import { buildResult } from '../result/build.ts';
import type { RunResult } from '../result/types.ts';
import { drive } from './drive.ts';
import { BenchFeed } from './feed.ts';
import { type BenchSettings, describeBench, mixText } from './settings.ts';

/** The run so far, for a status line: counts since the start. */
export interface BenchProgress {
  requests: number;
  rateLimited: number;
  /** 5xx and transport errors. */
  errors: number;
  /** Response time p99 so far, ms. */
  p99Ms: number;
}

export interface BenchRunOptions {
  /** Ends the benchmark early; the result is then marked partial. */
  signal?: AbortSignal;
  interruptedBy?: () => string | undefined;
  /** Called about once a second while the benchmark runs. */
  onProgress?(progress: BenchProgress): void;
  /** Given once, when the benchmark starts: its live recorder, read by live metrics (this thread's only). */
  onLive?(live: { recorder: Recorder }): void;
  /**
   * Given once, when the benchmark starts: the result as it stands, marked partial (undefined while
   * nothing is measured): what a second Ctrl-C writes before the process exits at once.
   */
  onSnapshot?(take: () => RunResult | undefined): void;
}

/** The result's configuration: what was asked, as `run` keeps its workload. */
export function benchConfig(s: BenchSettings): RunResult['config'] {
  return {
    workload: {
      executor: 'autocannon',
      operations: mixText(s.mix),
      connections: s.connections,
      pipelining: s.pipelining,
      ...(s.rate === undefined ? {} : { rate: s.rate }),
      workers: s.workers,
      duration: `${s.durationMs / 1000}s`,
    },
    // autocannon neither paces to a plan nor waits out a 429: raw mode, ban guard off.
    enforce: false,
    allowBanRisk: true,
    timeScale: 1,
    windows: s.windows,
    timeoutMs: s.timeoutMs,
    maxAttempts: 1,
    ...(s.refusalStatuses?.length ? { refusalStatuses: [...s.refusalStatuses] } : {}),
    spec: 'petstore.openapi.yaml (built in)',
  };
}

function progressOf(recorder: Recorder): BenchProgress {
  const o = recorder.overall;
  const errors = errorCount(o);
  const p99Ms = o.response.totalCount ? o.response.getValueAtPercentile(99) / 1000 : 0;
  return { requests: o.requests, rateLimited: o.rateLimited, errors, p99Ms };
}

/**
 * One benchmark in this thread: autocannon over the cycle, every answer recorded as `run` records its
 * attempts, and the result built by the same `buildResult`, so that report, compare, merge and
 * thresholds read it unchanged. No response checks: they cost CPU per request that a throughput
 * measurement would then include (`run` is the tool that checks).
 */
export async function benchRun(
  settings: BenchSettings,
  operations: readonly Operation[],
  options: BenchRunOptions = {},
): Promise<RunResult> {
  const byId = new Map(operations.map((op) => [op.id, op]));
  const cycleOps = settings.cycle.map((r) => {
    const op = byId.get(r.operationId);
    if (!op) throw new Error(`bench: operation '${r.operationId}' is not in the operation table`);
    return op;
  });
  const startedAt = now();
  const recorder = new Recorder({
    startedAt,
    workloadOnly: true,
    windows: settings.windows,
    checks: [],
    clientChecks: [],
  });
  const feed = new BenchFeed(recorder, cycleOps, settings.plan, new Set(settings.refusalStatuses ?? []));
  const ticker = options.onProgress
    ? setInterval(() => options.onProgress?.(progressOf(recorder)), 1000)
    : undefined;
  const resultOf = (endedAt: number, unpaired: number, partial: boolean) =>
    benchResult(settings, operations, recorder, {
      startedAt,
      endedAt,
      unpaired,
      partial,
      interruptedBy: partial ? options.interruptedBy?.() : undefined,
    });
  // Responses not paired yet are not in the recorder: a snapshot counts what is.
  options.onSnapshot?.(() => resultOf(now(), 0, true));
  let outcome: Awaited<ReturnType<typeof drive>>;
  try {
    recorder.measure(true, startedAt);
    options.onLive?.({ recorder });
    outcome = await drive(settings, feed, options.signal);
    recorder.measure(false, outcome.endedAt);
  } finally {
    if (ticker) clearInterval(ticker);
  }
  return resultOf(outcome.endedAt, outcome.unpaired, options.signal?.aborted ?? false);
}

/** The benchmark's result, built as `run` builds one, from what its recorder holds. */
function benchResult(
  settings: BenchSettings,
  operations: readonly Operation[],
  recorder: Recorder,
  o: { startedAt: number; endedAt: number; unpaired: number; partial: boolean; interruptedBy?: string },
): RunResult {
  const requests = recorder.overall.requests;
  return buildResult({
    meta: {
      toolVersion: TOOL_VERSION,
      nodeVersion: process.version,
      scenario: 'bench',
      description:
        o.unpaired === 0
          ? describeBench(settings)
          : `${describeBench(settings)}. ${o.unpaired} responses could not be paired with their request and are left out`,
      target: settings.target,
      embeddedTarget: settings.embeddedTarget,
      plan: settings.plan,
      startedAt: new Date(o.startedAt).toISOString(),
      endedAt: new Date(o.endedAt).toISOString(),
      partial: o.partial,
      ...(o.interruptedBy ? { interruptedBy: o.interruptedBy } : {}),
    },
    config: benchConfig(settings),
    recorder,
    operations: [...operations],
    workload: { iterations: requests, droppedIterations: 0, failedIterations: 0, flows: {} },
  });
}
