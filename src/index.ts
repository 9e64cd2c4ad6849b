/**
 * petstore-load's public module: what a scenario file imports (`import { defineScenario } from
 * 'petstore-load'`). Everything else in the package is private and may change in any release; this
 * list is the contract, as k6's `k6` and `k6/http` modules are for its scripts.
 *
 * @example
 * import { defineScenario } from 'petstore-load';
 *
 * export default defineScenario({
 *   name: 'browse',
 *   plan: 'free',
 *   workload: { executor: 'constant-vus', vus: 4, duration: '30s' },
 *   thresholds: ['p99<300ms', 'rate_limited<1%'],
 *   flows: [{ name: 'list', run: async (api) => { await api.listPets({ limit: 20 }); } }],
 * });
 *
 * @packageDocumentation
 */

export type { ApiResponse, CallInput, RequestInput, ResponseHeaders } from './api/call-types.ts';
export { type LinkValue, parseDeprecation, parseLinks, parseSunset } from './api/deprecation-headers.ts';
export { formatHttpDate, parseHttpDate } from './api/http-date.ts';
export type {
  Category,
  InventoryItem,
  NewCategory,
  NewOrder,
  NewPet,
  Order,
  Page,
  Pet,
  PetStatus,
} from './api/models.ts';
export type { RateWindow } from './api/plans.ts';
// The headers a flow may read for itself: rate limits, Retry-After, Deprecation and Sunset.
export {
  type HeaderValue,
  RATE_LIMIT_HEADER,
  type RateLimitState,
  readRateLimitHeaders,
} from './api/rate-limit-headers.ts';
export { parseRetryAfter, type RetryAfter } from './api/retry-after.ts';
export type { TenantGroupSpec, TenantRef } from './api/tenant-types.ts';
// `api.call` typed by a document of your own (`petstore-load types --spec FILE`).
export type { NoAnswer, TypedAnswer, TypedApi, TypedCallInput, TypedResponse } from './api/typed-call.ts';
// What a flow calls, and what it gets back.
export type { Api, CallFn } from './client/petstore-api.ts';
export type { ProbeResult } from './result/probe-types.ts';
// The catalogue a scenario's setup makes and its teardown removes (the shipped scenarios' own).
export { type Catalogue, prepareCatalogue, removeCatalogue, SETUP_STOCK } from './scenario/catalogue.ts';
export type {
  AnyApi,
  Battery,
  ConstantArrivalRate,
  ConstantVus,
  Duration,
  Flow,
  FlowContext,
  Probe,
  ProbeOutcome,
  RampingArrivalRate,
  RampingVus,
  Rate,
  Scenario,
  ThresholdOption,
  Workload,
} from './scenario/define.ts';
// A scenario: its workload, flows, thresholds, tenants and compliance probes.
export { defineScenario } from './scenario/define.ts';
// A compliance battery: probes with a verdict each, in the result's `probes`.
export { describeResponse, expectError, isErrorBody, ProbeBattery, probeBattery } from './scenario/probes.ts';
