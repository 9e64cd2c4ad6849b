import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { runCapacity } from '../../src/capacity/run-capacity.ts';
import type { Transport } from '../../src/client/client.ts';
import type { CapacityReport } from '../../src/result/capacity-types.ts';
import type { RunResult } from '../../src/result/types.ts';
import type { RunningServer } from '../../src/server/index.ts';
import type { ServerOptions } from '../../src/server/options.ts';
import { type CliOutcome, readJson, runCli } from './integration-cli.ts';
import type { RunningLimiter } from './limiters.ts';
import { inSimulatedTime, simulatedServer } from './simulated.ts';

/**
 * `capacity` against targets a test starts itself, one plan's key each, cases side by side: what
 * the limiter files share. Every limiter or server started through `started` is stopped by `stop`.
 */

export interface ProbeRun {
  result: RunResult;
  report: CapacityReport;
  elapsedMs: number;
  /** What the probe said while it ran (its announced times among them). */
  log: string[];
}

/**
 * What every probe's model must keep, whatever the limiter: paced at itself it draws no 429, and it
 * never claims a sustained rate below what its own paced windows were admitted at (5% for the
 * estimate's error). Called on every probe these helpers run.
 */
export function expectModelHolds(r: CapacityReport): void {
  const why = `${r.limiter.type}: ${r.limiter.evidence.join('; ')}`;
  expect(r.limiter.check?.refused ?? 0, why).toBe(0);
  const admitted = r.rate.acceptedPerWindow.reduce((a, b) => a + b, 0);
  const span = r.rate.acceptedPerWindow.length * r.window.seconds;
  if (r.limiter.sustainedPerSecond !== null && span > 0 && r.rate.rateLimited === 0)
    expect(r.limiter.sustainedPerSecond, why).toBeGreaterThanOrEqual((admitted / span) * 0.95);
}

/** One plan's key probed as `capacity` probes it, two paced windows, its lines kept. */
export async function probeOne(url: string, plan: Plan, timeScale = 1): Promise<ProbeRun> {
  const spec = await loadSpec();
  const log: string[] = [];
  const started = Date.now();
  const { result, reports } = await runCapacity({
    target: url,
    embeddedTarget: false,
    targets: [{ plan, apiKey: 'free-demo-key', baseUrl: url, timeScale }],
    windows: 2,
    operations: spec.operations,
    spec: 'built in',
    log: (_plan, line) => log.push(line),
  });
  expectModelHolds(reports[0] as CapacityReport);
  return { result, report: reports[0] as CapacityReport, elapsedMs: Date.now() - started, log };
}

/**
 * `probeOne` in simulated time against a reference server answering in process, behind `limiter` (a
 * model of a third-party limiter, test/helpers/simulated-limiters.ts) if one is given. The document
 * is read before the clock is faked: a file read inside would let it race ahead.
 */
export async function probeSimulated(
  server: ServerOptions,
  plan: Plan,
  timeScale = 1,
  limiter: (upstream: Transport) => Transport = (upstream) => upstream,
  maxWaitMs?: number,
  /** `--refusal-status`: statuses the target refuses with besides 429. */
  refusalStatuses?: number[],
  latencyMs?: (n: number) => number,
): Promise<ProbeRun> {
  const spec = await loadSpec();
  const target = await simulatedServer(server, latencyMs);
  const transport = limiter(target.transport);
  try {
    return await inSimulatedTime(async () => {
      const log: string[] = [];
      const started = Date.now();
      const { result, reports } = await runCapacity({
        target: target.url,
        embeddedTarget: false,
        targets: [{ plan, apiKey: 'free-demo-key', baseUrl: target.url, timeScale, transport, maxWaitMs }],
        windows: 2,
        operations: spec.operations,
        spec: 'built in',
        refusalStatuses,
        log: (_plan, line) => log.push(line),
      });
      expectModelHolds(reports[0] as CapacityReport);
      return { result, report: reports[0] as CapacityReport, elapsedMs: Date.now() - started, log };
    });
  } finally {
    await target.close();
  }
}

export class CapacityCases {
  private readonly running: { stop(): Promise<void> }[] = [];
  private readonly runs = new Map<string, ProbeRun>();

  /** A limiter or server, stopped with the others by `stop`. */
  async started<T extends RunningLimiter | RunningServer>(start: () => Promise<T>): Promise<T> {
    const l = await start();
    this.running.push({ stop: 'stop' in l ? () => l.stop() : () => l.close() });
    return l;
  }

  /** Every case's probe, awaited in turn (they run side by side). */
  async settle(cases: [string, Promise<ProbeRun>][]): Promise<void> {
    for (const [name, run] of cases) this.runs.set(name, await run);
  }

  get(name: string): ProbeRun {
    const run = this.runs.get(name);
    if (!run) throw new Error(`no run for ${name}`);
    return run;
  }

  entries(): IterableIterator<[string, ProbeRun]> {
    return this.runs.entries();
  }

  async stop(): Promise<void> {
    await Promise.all(this.running.map((l) => l.stop()));
  }
}

/**
 * `capacity` through the CLI against `url`, one plan (free, its demo key) of the windows given,
 * written as a --plans file in `dir`, with `extra` flags: the outcome, the result it wrote, and why,
 * for messages.
 */
export async function capacityThroughCli(
  url: string,
  windows: { name: string; limit: number; seconds: number }[],
  dir: string,
  extra: readonly string[] = [],
): Promise<{
  outcome: CliOutcome;
  result: RunResult;
  report: CapacityReport | undefined;
  why: string;
  elapsedMs: number;
}> {
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ free: { windows } }));
  const out = join(dir, 'out');
  const started = Date.now();
  const outcome = await runCli(
    [
      'capacity',
      '--base-url',
      url,
      '--api-key',
      'free=free-demo-key',
      '--plans',
      plans,
      '--out',
      out,
      ...extra,
    ],
    90_000,
  );
  const elapsedMs = Date.now() - started;
  const result = readJson(join(out, 'result.json')) as RunResult;
  const report = result.capacity?.[0];
  const why = `${outcome.stdout}\n${outcome.stderr}\n${report?.limiter.evidence.join('; ')}`;
  return { outcome, result, report, why, elapsedMs };
}
