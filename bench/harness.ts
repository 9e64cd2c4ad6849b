import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Operation } from '../src/api/operations.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  getPlan,
  type PlanTable,
  planRate,
  scalePlan,
} from '../src/api/plans.ts';
import { loadSpec } from '../src/api/spec.ts';
import type { RunResult } from '../src/result/types.ts';
import type { Flow, Workload } from '../src/scenario/define.ts';
import { executeScenario } from '../src/scenario/execute.ts';
import { resolveWorkload } from '../src/scenario/workload.ts';

/** A plans file whose enterprise plan never limits: throughput benchmarks measure cost, not 429s. */
export function unlimitedPlansFile(): { path: string; plans: PlanTable } {
  const overrides = { enterprise: { perMinute: 1_000_000_000, perDay: 1_000_000_000 } };
  const path = join(mkdtempSync(join(tmpdir(), 'bench-plans-')), 'plans.json');
  writeFileSync(path, JSON.stringify(overrides));
  return { path, plans: applyPlanOverrides(DEFAULT_PLANS, overrides) };
}

/** Runs one flow through the real `run` pipeline (client, pacing, recorder, checks) and returns the result. */
export async function runFlow(options: {
  url: string;
  plan: string;
  plans?: PlanTable;
  timeScale?: number;
  workload: Workload;
  flow: Flow<undefined>;
  /** The operation table, when the caller has it already (parsing the document costs CPU). */
  operations?: Operation[];
  onWorkload?(running: boolean): void;
}): Promise<RunResult> {
  const operations = options.operations ?? (await loadSpec()).operations;
  const timeScale = options.timeScale ?? 1;
  const windows = scalePlan(getPlan(options.plans ?? DEFAULT_PLANS, options.plan), timeScale).windows;
  return executeScenario({
    scenario: { name: 'bench', workload: options.workload, flows: [options.flow] },
    workload: resolveWorkload(options.workload, planRate(windows)),
    baseUrl: options.url,
    target: options.url,
    embeddedTarget: true,
    apiKey: `${options.plan}-demo-key`,
    operations,
    plan: options.plan,
    windows,
    timeScale,
    enforce: true,
    spec: 'built in',
    onWorkload: options.onWorkload,
  });
}
