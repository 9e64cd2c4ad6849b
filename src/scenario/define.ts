import type { TenantGroupSpec, TenantRef } from '../api/tenant-types.ts';
import type { Api } from '../client/petstore-api.ts';
import type { ProbeResult } from '../result/probe-types.ts';

export type Duration = string | number;
/** Iterations per second, or a share of the plan's request rate: '100%'. */
export type Rate = number | `${number}%`;

/** Open model (k6's arrival-rate executors): iterations start on a schedule whatever the responses. */
export interface ConstantArrivalRate {
  executor: 'constant-arrival-rate';
  rate: Rate;
  duration?: Duration;
  /** Iterations in flight at most; one more due is dropped and counted (dropped_iterations). */
  maxInFlight?: number;
  iterations?: number;
}

export interface RampingArrivalRate {
  executor: 'ramping-arrival-rate';
  startRate?: Rate;
  stages: { target: Rate; duration: Duration }[];
  maxInFlight?: number;
  iterations?: number;
}

/** Closed model (k6's VU executors): N virtual users, each starting its next iteration when the last ends. */
export interface ConstantVus {
  executor: 'constant-vus';
  vus: number;
  duration?: Duration;
  /** Pause between a VU's iterations: fixed, or a [min, max] range drawn uniformly. */
  thinkTime?: Duration | [Duration, Duration];
  iterations?: number;
}

export interface RampingVus {
  executor: 'ramping-vus';
  startVUs?: number;
  stages: { target: number; duration: Duration }[];
  thinkTime?: Duration | [Duration, Duration];
  iterations?: number;
}

export type Workload = ConstantArrivalRate | RampingArrivalRate | ConstantVus | RampingVus;

export interface FlowContext<D> {
  /** What setup returned. */
  data: D;
  /** Virtual user number (closed model) or iteration slot (open model). */
  vu: number;
  /** Iteration number across the run, from 0. */
  iteration: number;
  /** Seeded random in [0, 1): the same seed replays the same choices. */
  random(): number;
  /** A tenant mix: the tenant this iteration sends as (its plan, group and label; never its key). */
  tenant?: TenantRef;
  pick<T>(items: readonly T[]): T;
}

/**
 * What a flow's `api` may be typed as: the pet store's `Api` (the default), or `TypedApi<operations>`
 * for a document of your own (`petstore-load types`). The object is the same at run time.
 */
export interface AnyApi {
  call(...args: never[]): Promise<unknown>;
}

export interface Flow<D, A extends AnyApi = Api> {
  name: string;
  /** Relative share of iterations (default 1). */
  weight?: number;
  run(api: A, ctx: FlowContext<D>): Promise<void>;
}

export interface Scenario<D = unknown, A extends AnyApi = Api> {
  name: string;
  description?: string;
  /** Plan the client paces for (default free). */
  plan?: string;
  workload: Workload;
  /** Raw mode: no pacing, to exceed the quota on purpose (the ban guard stays). */
  enforce?: boolean;
  /**
   * A tenant mix: many keys on several plans in one run, each paced by its own plan. Every arrival
   * (or virtual user) belongs to one tenant; an open workload's rate is each key's. `--tenants FILE`
   * gives real keys instead of the embedded server's minted ones.
   */
  tenants?: TenantGroupSpec[];
  setup?(api: A): Promise<D> | D;
  /** How long setup may take, e.g. '2m' (default 60s, as k6's setupTimeout): past it the run fails. */
  setupTimeout?: string;
  flows: Flow<D, A>[];
  teardown?(api: A, data: D): Promise<void> | void;
  /** How long teardown may take (default 60s); past it teardown is cut short, the result kept. */
  teardownTimeout?: string;
  /**
   * Pass/fail criteria (`p99<300ms`, `listPets:p95<100ms`, `rate_limited<1%`): any that fails makes
   * the run exit 1. An object form, as in k6, may end the run as soon as it fails.
   */
  thresholds?: (string | ThresholdOption)[];
  /**
   * A compliance battery (`probeBattery([...])`, its `flow` among the flows): its probes' verdicts go
   * into the result as `probes`, and any that fails makes the run exit 1.
   */
  probes?: Battery<D>;
}

/**
 * What a scenario's `probes` holds, as the run reads it: `probeBattery([...])` (src/scenario/probes.ts)
 * makes one. Declared here by its shape, so that a scenario's types need nothing of how it runs.
 */
export interface Battery<D = unknown> {
  readonly flow: Flow<D>;
  readonly probes: readonly Probe<D>[];
  /** The verdicts of the latest run of the flow, in the probes' order. */
  results(): ProbeResult[];
}

/** What a probe found: `actual` in the terms of its `expected` (`401 Error (unauthorized)`). */
export interface ProbeOutcome {
  passed: boolean;
  actual: string;
  detail?: string;
}

/**
 * One deterministic assertion about the service, like a conformance suite's test case: send a
 * request (a bad one on purpose, often), compare the answer with what the interface promises.
 */
export interface Probe<D = unknown> {
  id: string;
  description: string;
  /** What a conforming service answers, in a few words: `401 Error`. */
  expected: string;
  /** Where the rule comes from (the seed's section, an RFC). */
  source?: string;
  run(api: Api, data: D): Promise<ProbeOutcome>;
}

export interface ThresholdOption {
  threshold: string;
  /** End the run as soon as this threshold fails (judged each second), not only at the end. */
  abortOnFail?: boolean;
  /** With abortOnFail: how much of the workload runs before it is judged, e.g. '10s' (default 0). */
  delayAbortEval?: string;
}

/**
 * Declares a scenario: the default export of a scenario file. Identity at run time; it gives the
 * file its types (as k6's options object does): `api`'s methods and bodies, `ctx.data` as `setup`
 * returned it, the workload's and thresholds' shapes.
 *
 * @example
 * import { defineScenario } from 'petstore-load';
 *
 * export default defineScenario({
 *   name: 'shop',
 *   plan: 'pro',
 *   workload: { executor: 'constant-arrival-rate', rate: '80%', duration: '1m' },
 *   setup: async (api) => ({ categoryId: (await api.createCategory({ name: 'dogs' })).body.id }),
 *   flows: [
 *     { name: 'browse', weight: 3, run: async (api) => void (await api.listPets({ limit: 20 })) },
 *     {
 *       name: 'adopt',
 *       run: async (api, ctx) => void (await api.createPet({ name: 'Rex', categoryId: ctx.data.categoryId })),
 *     },
 *   ],
 *   thresholds: ['p99<300ms', 'rate_limited<1%'],
 * });
 *
 * Against a document of your own, type `api` with what `petstore-load types` generated from it (one
 * annotation types every flow, setup and teardown of the scenario):
 *
 * @example
 * import { defineScenario } from 'petstore-load';
 * import type { Api } from './api-types.ts';
 *
 * export default defineScenario({
 *   name: 'bookings',
 *   workload: { executor: 'constant-vus', vus: 2, duration: '30s' },
 *   flows: [{ name: 'list', run: async (api: Api) => void (await api.call('listBookings', { query: { limit: 10 } })) }],
 * });
 */
export function defineScenario<D, A extends AnyApi = Api>(scenario: Scenario<D, A>): Scenario<D> {
  // The api a run hands over is the same object whatever type the file gave it (its `call`).
  return scenario as unknown as Scenario<D>;
}
