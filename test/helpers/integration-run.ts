import type { LimiterKind } from '../../src/api/limiter-kinds.ts';
import {
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  type RateWindow,
  scalePlan,
} from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import type { Transport } from '../../src/client/client.ts';
import type { AttemptRecord } from '../../src/record/attempt.ts';
import type { Contract } from '../../src/record/checks/contract.ts';
import type { RunResult } from '../../src/result/types.ts';
import { defineScenario, type Scenario, type Workload } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload, type WorkloadOverrides } from '../../src/scenario/workload.ts';
import { type ServerOptions, startServer } from '../../src/server/index.ts';
import { inSimulatedTime, simulatedServer } from './simulated.ts';

/**
 * One run as `petstore-load run` does it, in process: a reference server (startServer) and
 * executeScenario, which wires the plan-aware client, the recorder and the engine (runScenario) and
 * builds the result, as the CLI does. The server is always closed.
 */

export interface InProcessRun {
  scenario: Scenario<unknown>;
  /** Server options; `timeScale` and `plans` are also what the client paces for. */
  server?: ServerOptions;
  /** Plan the client paces for and whose demo key it sends (default the scenario's, else free). */
  plan?: string;
  /** Raw mode when false (default: the scenario's, else true). */
  enforce?: boolean;
  overrides?: WorkloadOverrides;
  seed?: number;
  /**
   * In simulated time against the server answering in process (test/helpers/simulated.ts): for what
   * the client, the engine and the checks do with time, not what a socket does.
   */
  simulated?: boolean;
}

export interface InProcessOutcome {
  result: RunResult;
  /** Every attempt as the recorder was given it. */
  attempts: AttemptRecord[];
  windows: RateWindow[];
}

const DEMO_KEY: Record<string, string> = {
  free: 'free-demo-key',
  pro: 'pro-demo-key',
  business: 'business-demo-key',
  enterprise: 'enterprise-demo-key',
};

/** Loaded once per test file: validating the document costs up to a second on a loaded machine. */
let specOnce: ReturnType<typeof loadSpec> | undefined;

export async function runInProcess(run: InProcessRun): Promise<InProcessOutcome> {
  specOnce ??= loadSpec();
  const spec = await specOnce;
  const plans: PlanTable = run.server?.plans ?? { ...DEFAULT_PLANS };
  const timeScale = run.server?.timeScale ?? 1;
  const planName = run.plan ?? run.scenario.plan ?? 'free';
  const windows = scalePlan(getPlan(plans, planName), timeScale).windows;
  const workload = resolveWorkload(run.scenario.workload, planRate(windows), run.overrides);
  const attempts: AttemptRecord[] = [];

  const server = run.simulated
    ? await simulatedServer({ ...run.server, plans })
    : await startServer({ ...run.server, plans });
  const transport = 'transport' in server ? server.transport : undefined;
  const execute = () =>
    executeScenario({
      scenario: run.scenario,
      workload,
      baseUrl: server.url,
      target: server.url,
      embeddedTarget: false,
      apiKey: DEMO_KEY[planName] ?? 'free-demo-key',
      operations: spec.operations,
      plan: planName,
      windows,
      timeScale,
      enforce: run.enforce ?? run.scenario.enforce ?? true,
      spec: 'petstore.openapi.yaml (built in)',
      seed: run.seed,
      tap: (attempt) => attempts.push(attempt),
      transport,
    });
  try {
    const result = run.simulated ? await inSimulatedTime(execute) : await execute();
    return { result, attempts, windows };
  } finally {
    await server.close();
  }
}

/** Check id -> failures, for assertions that read as a table. */
export function failuresByCheck(result: RunResult): Record<string, number> {
  return Object.fromEntries(result.checks.map((c) => [c.id, c.failures]));
}

/** The ids of the checks with at least one failure, sorted. */
export function failingChecks(result: RunResult): string[] {
  return result.checks
    .filter((c) => c.failures > 0)
    .map((c) => c.id)
    .sort();
}

/** The check results with their first samples, for a failure message that says what went wrong. */
export function describeChecks(result: RunResult): string {
  return result.checks
    .map((c) => `${c.id}: ${c.passes} passed, ${c.failures} failed ${JSON.stringify(c.samples.slice(0, 2))}`)
    .join('\n');
}

/**
 * `listPets` as `run` drives it against any target (a third-party limiter, a reference server
 * configured by the caller) with the Free demo key, paced for `windows`, or raw when `enforce` is
 * false: the tests of limiters that no scenario names.
 */
export async function runListAgainst(
  url: string,
  o: {
    workload: Workload;
    windows: RateWindow[];
    enforce: boolean;
    timeScale?: number;
    limiter?: LimiterKind;
    maxInFlight?: number;
    contract?: Contract;
    /** A simulated target's transport (test/helpers/simulated.ts); default a real socket to `url`. */
    transport?: Transport;
    /** `--refusal-status`: statuses the target refuses with besides 429. */
    refusalStatuses?: number[];
  },
): Promise<RunResult> {
  specOnce ??= loadSpec();
  const scenario = defineScenario({
    name: 'list-against',
    workload: o.workload,
    flows: [{ name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) }],
  });
  return executeScenario({
    scenario,
    workload: resolveWorkload(scenario.workload, planRate(o.windows)),
    baseUrl: url,
    target: url,
    embeddedTarget: false,
    apiKey: 'free-demo-key',
    operations: (await specOnce).operations,
    plan: 'free',
    windows: o.windows,
    timeScale: o.timeScale ?? 1,
    enforce: o.enforce,
    limiter: o.limiter,
    maxInFlight: o.maxInFlight,
    contract: o.contract,
    refusalStatuses: o.refusalStatuses,
    spec: 'built in',
    transport: o.transport,
  });
}
