import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { RateWindow } from '../api/plans.ts';
import type { Contract } from '../record/checks/contract.ts';
import type { CheckResult } from '../record/checks/tally.ts';
import type { HeaderDialect } from '../record/dialects.ts';
import type { LatencyStats } from '../record/histogram.ts';
import type { OperationTimelinePoint } from '../record/operation-timelines.ts';
import type { KeyQuota } from '../record/quota-timeline.ts';
import type { TimelinePoint } from '../record/timeline.ts';
import type { BanReport, CapacityReport, TenantCapacity } from './capacity-types.ts';
import type { ProbeResult } from './probe-types.ts';

export type { HeaderDialect } from '../record/dialects.ts';

export const SCHEMA_VERSION = 1;

/**
 * The one result contract every step after `run` reads (report, compare, merge, thresholds).
 * Additive changes keep schemaVersion 1; anything that changes a meaning bumps it.
 */
export interface RunResult {
  schemaVersion: typeof SCHEMA_VERSION;
  meta: ResultMeta;
  config: RunConfig;
  overall: OperationSummary;
  operations: Record<string, OperationSummary & OperationInfo>;
  timeline: TimelinePoint[];
  /**
   * Per operation, over the timeline's seconds (those with a response of it): its responses and their
   * service time p50 and p99 in ms. Only the busiest operations by requests are kept (at most
   * OPERATION_TIMELINES_KEPT, src/record/operation-timelines.ts). Absent from results of older versions.
   */
  operationTimelines?: Record<string, OperationTimelinePoint[]>;
  /**
   * Per key (its label, the plan): over the timeline's seconds, the lowest and the last Remaining the
   * server announced, the requests and 429s, and the seconds a new window was seen (Remaining jumped
   * up, or the reset announced before passed); and the pauses the client kept after 429s, from the
   * 429's receipt to the end of its pause, overlapping ones joined, the earliest 1000 kept
   * (`droppedPauses` counts the rest). No Remaining in any point: the server announced no quota.
   * Absent from results of older versions. Types and field meanings: src/record/quota-timeline.ts.
   */
  quota?: KeyQuota[];
  checks: CheckResult[];
  compliance: Compliance;
  workload: WorkloadSummary;
  /** Thresholds evaluated at the end of the run (absent when none were declared). */
  thresholds?: ThresholdResult[];
  /** `run --baseline`: the comparison's verdict, so that every output (JUnit, summaries, HTML) shows it. */
  baseline?: BaselineVerdict;
  /** `petstore-load capacity`: per plan, what its key got against what the plan promises. */
  capacity?: CapacityReport[];
  /** `petstore-load capacity --probe-ban`: the temporary ban, provoked on the key named for it. */
  banProbe?: BanReport;
  /**
   * `petstore-load capacity --tenants`: the largest number of tenants that held at their quota, and
   * the ramp's curve. The run-wide figures (overall, operations, byPlan, timeline) are those of the
   * largest step that held (else of the first step).
   */
  tenantCapacity?: TenantCapacity;
  /** The compliance battery's verdicts (a scenario with `probes`), in order; any failed one fails the run. */
  probes?: ProbeResult[];
  /**
   * A tenant mix (`tenants` in the scenario, or `--tenants`): per plan, the tenants of its unnamed
   * groups. Named groups (an abusive customer) are kept apart, in `byTenantGroup`.
   */
  byPlan?: Record<string, TierSummary>;
  /** A tenant mix's named groups, each apart from its plan's tier. */
  byTenantGroup?: Record<string, TierSummary>;
  /**
   * A tenant mix with a named raw-mode group that starts later (a noisy neighbour): did the compliant
   * tenants' latency or 429s change when it started? Absent when the mix has no such group.
   */
  isolation?: IsolationVerdict;
}

/** One tier of a tenant mix: a plan's tenants, or a named group's. */
export interface TierSummary {
  plan: string;
  /** Tenants in the tier, as declared. */
  keys: number;
  /** Tenants of the tier that sent at least one request. */
  keysSeen: number;
  /** Pacing on for every tenant of the tier (false: raw mode). */
  enforce: boolean;
  requests: number;
  /** Requests per second while the workload ran. */
  rate: number;
  statuses: Record<string, number>;
  rateLimited: number;
  rateLimitedRate: number;
  /** Requests sent inside a 429's pause of their own key. */
  violations: number;
  /** 5xx and transport errors. */
  errors: number;
  errorRate: number;
  service: LatencyStats;
  response: LatencyStats;
  /** HdrHistogram compressed base64, values in µs: what merge adds. */
  histograms: { service: string; response: string };
  /** Responses other than 429 and transport errors while the workload ran. */
  admitted: number;
  /** Requests per second one key's plan allows (its shortest window). */
  planRatePerKey: number;
  /**
   * When the tier began sending, seconds after the workload's start (its earliest group's
   * startTime; absent for 0): its rate and utilisation count from there, not from the run's start.
   */
  startSeconds?: number;
  /**
   * Admitted requests over what the tier's keys were allowed while the workload ran: `overall` for
   * the tier, and the spread across its keys (each key's own share; keys that sent nothing count 0).
   */
  utilization: { overall: number; min: number; p50: number; max: number };
  /** Admitted requests of each key during the workload, by ordinal - 1: the spread's data, mergeable. */
  admittedPerKey: number[];
}

/** The noisy-neighbour verdict of a tenant mix. */
export interface IsolationVerdict {
  passed: boolean;
  /** One line: why it passed or failed. */
  detail: string;
  /** The named raw-mode groups whose start splits the run. */
  noisyGroups: string[];
  /** When the first of them started, ms after the workload's start. */
  noisyFromMs: number;
  /** Per plan, the compliant tenants (unnamed groups) before and after the noisy group started. */
  tiers: Record<string, IsolationTier>;
}

export interface IsolationStretch {
  requests: number;
  rateLimited: number;
  /** 5xx and transport errors. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Response time, HdrHistogram compressed base64 in µs (merge recomputes the verdict from it). */
  histogram: string;
}

export interface IsolationTier {
  before: IsolationStretch;
  after: IsolationStretch;
  /** One-sided rank test (after slower than before), as `compare` uses; null when either side is too small. */
  pValue: number | null;
  /** after / before, null when before has no requests. */
  p50Ratio: number | null;
  p99Ratio: number | null;
  passed: boolean;
  /** Why the tier failed, in one line (absent when it passed). */
  reason?: string;
}

export interface BaselineVerdict {
  /** The baseline's file as given on the command line. */
  file: string;
  /** Changes beyond tolerance, significant and sustained: each one fails the run. */
  regressions: BaselineChange[];
  improvements: number;
}

export interface BaselineChange {
  /** An operation id, or 'all'. */
  operation: string;
  /** p50, p95, p99 (ms), rps (per second), errors or rate_limited (shares, 0..1). */
  metric: string;
  baseline: number;
  current: number;
}

/** One threshold's verdict, as `run` evaluated it (and as report, JUnit and summaries show it). */
export interface ThresholdResult {
  /** The expression as declared, e.g. `listPets:p95<100ms`. */
  expression: string;
  /** Where it was declared. */
  source: 'scenario' | 'cli';
  /** The measured value in the expression's unit (ms, %, per second or a count); null when nothing was measured. */
  actual: number | null;
  passed: boolean;
  /** Why it failed, in one line (absent when it passed). */
  detail?: string;
  /** True when it failed during the run and, being `abortOnFail`, ended the run early. */
  aborted?: boolean;
}

export interface ResultMeta {
  tool: 'petstore-load';
  toolVersion: string;
  nodeVersion: string;
  scenario: string;
  description?: string;
  /** Base URL without credentials, query or fragment. */
  target: string;
  /** True when the run started the reference server itself. */
  embeddedTarget: boolean;
  plan: string;
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  /** True when the run was interrupted; the figures cover the part that ran. */
  partial: boolean;
  interruptedBy?: string;
  /**
   * A checkpoint `run` wrote while it went on (result.partial.json), always partial: the figures up
   * to `endedAt`. Found on disk after the run, it means the run never wrote its result (killed).
   */
  checkpoint?: boolean;
  /**
   * Wall time around the workload (`startedAt` to `endedAt`): seconds setup took before it (a
   * fleet's wait for its generators included) and teardown after it. Paced at the plan's rate, as
   * they are, they can outlast the load against a real-time target. Absent from older results.
   */
  setupSeconds?: number;
  teardownSeconds?: number;
  /** `--shard I/N`: this result is part I of N generators' run (1-based). */
  shard?: { index: number; count: number };
  /** `--quota-store`: where the key's quota was shared with other generators (no credentials). */
  sharedQuota?: string;
  /** `--workers N`: the run was N worker threads' results merged. */
  workers?: number;
  /** The `run_id` label its live metrics carried (`--metrics`): how to find the run's series. */
  runId?: string;
  /** `--fleet`: the fleet this result is (merged) or is a shard of. */
  fleet?: FleetMeta;
}

/** A fleet of generators as one run: its name, N, and each shard's part in it. */
export interface FleetMeta {
  name: string;
  generators: number;
  /** Shards with no result of their own: lost (silent past 5 s), their last checkpoint counted if any. */
  lost: number[];
  shards: FleetShardMeta[];
}

export interface FleetShardMeta {
  index: number;
  /** host:pid of the generator. */
  host?: string;
  /** finished: its final result; lost: its last checkpoint (or nothing) stands for it. */
  state: 'finished' | 'interrupted' | 'lost';
  startedAt?: string;
  endedAt?: string;
  requests: number;
  /** Its part of the workload as declared (arrival rates divided by N). */
  share: number;
}

export interface RunConfig {
  workload: Record<string, unknown>;
  enforce: boolean;
  allowBanRisk: boolean;
  timeScale: number;
  /** Plan windows as the target counts them (after time scale). */
  windows: RateWindow[];
  timeoutMs: number;
  maxAttempts: number;
  /** `--refusal-status`: statuses counted as the limiter's refusals besides 429 (absent: none). */
  refusalStatuses?: number[];
  spec: string;
  /**
   * Formats the document's response schemas name that the response-schema check does not know
   * (`iso-country-code`): bodies were checked against the rest of their schema (absent: none).
   */
  formatsNotChecked?: string[];
  /** Seed of the flow choices: the same seed replays the same choices. */
  seed?: number;
  /** `--contract`: the rate-limit dialect the checks judged as promised (absent: the seed's). */
  contract?: Contract;
  /**
   * How requests reached the target, when not as Node does by default: a CA of one's own (`--ca`),
   * no verification (`--insecure`: every figure came from an unverified peer), a client certificate,
   * HTTP/2 offered, the proxy's origin. Never a certificate's or key's contents.
   */
  network?: NetworkSeen;
}

export interface OperationInfo {
  method: string;
  path: string;
  deprecated: boolean;
  stability: string;
}

export interface NetworkSeen {
  ca?: boolean;
  insecure?: boolean;
  clientCertificate?: boolean;
  http2?: boolean;
  proxy?: string;
}

export interface OperationSummary {
  requests: number;
  /** Requests per second while the workload ran (setup and teardown not counted). */
  rate: number;
  statuses: Record<string, number>;
  /** The limiter's refusals, whatever their status. */
  rateLimited: number;
  /** rateLimited / requests. */
  rateLimitedRate: number;
  /** The limiter's refusals by status (absent from results written before). */
  refusals?: Record<string, number>;
  retries: number;
  transportErrors: Record<string, number>;
  /** Responses by the protocol that carried them, 'HTTP/1.1' or 'HTTP/2' (absent from older results). */
  protocols?: Record<string, number>;
  pacingWaitMs: number;
  backoffWaitMs: number;
  /** Responses that failed at least one check. */
  checkFailures: number;
  /** Sent to received, ms. */
  service: LatencyStats;
  /** Due to received, less pacing and backoff waits (coordinated-omission corrected), ms. */
  response: LatencyStats;
  /** HdrHistogram compressed base64, values in µs. */
  histograms: { service: string; response: string };
}

export interface Compliance {
  /** The limiter's refusals, whatever their status (src/api/responses.ts says what is one). */
  rateLimited: number;
  rateLimitedRate: number;
  /** The limiter's refusals by status: `{"429": 12, "503": 3}` (absent from older results). */
  refusals?: Record<string, number>;
  /**
   * 503s with no sign of a limiter (no Retry-After, no spent quota, no problem type): a headerless
   * limiter's refusals or an overloaded target's; kept away from as refusals, counted here apart.
   * `--refusal-status 503` counts them as the limiter's. Absent when none.
   */
  unexplained?: number;
  /** Bare 403s to a key admitted before: a limiter's refusal, perhaps (`--refusal-status 403`). Absent when none. */
  forbiddenAfterAdmitted?: number;
  retries: number;
  /** Requests sent inside a Retry-After window, counted from timestamps. */
  violations: number;
  violationSamples: { operation: string; sentAt: number; pauseUntil: number }[];
  pacingWaitMs: number;
  backoffWaitMs: number;
  /** Responses other than 429 and transport errors while the workload ran (not setup, not teardown). */
  admitted: number;
  /** Requests per second the plan allows (shortest window). */
  planRate: number;
  /** admitted rate / plan rate. */
  quotaUtilization: number;
  /**
   * Of `pacingWaitMs`, the requests' waits while the server's told budget held the key (its
   * Remaining spent, until its Reset; in raw mode, the ban guard's overshoot past it spent): summed
   * over requests, as `pacingWaitMs`. Absent when none (and from older results).
   */
  budgetWaitMs?: number;
  /**
   * A wait that outlived the run: the server paused the key (or its quota held it) until `until`
   * (epoch ms), and `by` says what said so, in the server's words: 'Retry-After 999999999 s', or the
   * fields that spent its budget, 'RateLimit remaining=0, reset=10'. `cause`: a refusal's pause, the
   * server's told budget, or the plan's pacing (absent from older results). The run ended first.
   */
  heldPastEnd?: { until: number; by: string; cause?: 'pause' | 'budget' | 'pacing' };
  /**
   * How long the server's told budget (its Remaining spent, until its Reset) held the key while the
   * workload ran, in wall time (a tenant mix: the key it held longest), and `fields`, the answer's
   * fields that began its latest hold as the server sent them ('RateLimit remaining=0, reset=10').
   * Absent when it held none.
   */
  budgetHold?: { ms: number; fields: string };
  /**
   * `--quota-store`: each spell in which the shared store did not answer, in seconds from the run's
   * start (`to` absent: it never came back before the run ended, and the run exits 3). Nothing is
   * sent without the store's say: `held` sends waited for it, and `sentWithout` is 0.
   */
  storeOutages?: StoreOutageSeen[];
  /**
   * The dialect(s) the target told its quota in, counted per response, and the contract the checks
   * judged them against (absent when no response was checked).
   */
  headerDialect?: HeaderDialect;
  /** The target's limiter as the client met it; absent when it was not given and taught nothing. */
  limiter?: LimiterSeen;
  /**
   * Responses a delaying limiter held (a queue releasing at its rate, a slow-down adding a step per
   * request), told from timing alone; absent when none was. Their holds are in the latency figures.
   */
  heldByLimiter?: HeldByLimiterSeen;
}

/** See held-by-limiter.ts for how they are told from a slow service. */
export interface HeldByLimiterSeen {
  responses: number;
  /** Latency beyond the operation's fastest answer (the service's own), summed over the held, ms. */
  totalMs: number;
  longestMs: number;
  /** What held them: `both` when some keys met a queue and others a slow-down; `unknown` when no window told. */
  kind: 'queue' | 'slow-down' | 'both' | 'unknown';
  /** Of `responses`, those a queue held and those a slow-down held. */
  queued: number;
  slowed: number;
  /** The queue's interval between releases, ms (when a queue held any). */
  intervalMs?: number;
  /** The slow-down's step per request, ms (when a slow-down held any). */
  stepMs?: number;
  /** Service time of every response but the held ones (429s and errors included), as `overall.service`. */
  unheld: LatencyStats;
  /** Its HdrHistogram, compressed base64, µs: what merge adds. */
  unheldHistogram: string;
}

export interface StoreOutageSeen {
  /** Seconds from the run's start. */
  from: number;
  to?: number;
  held: number;
  sentWithout: number;
  /** How pacing went on: see StoreResume (absent: it never came back, or no send came after it). */
  resumed?: 'intact' | 'server' | 'held' | 'local-share';
}

/**
 * What the client knew or learned of the server's limiter: given with `--limiter`, or a GCRA
 * (nginx limit_req, gateways) learned from a 429 at the plan's own spacing; the gap it then kept
 * between any two sends; and how often a 429 that told no wait halved the key's rate.
 */
export interface LimiterSeen {
  model: LimiterKind | 'unknown';
  given: boolean;
  /** Kept between one send and the next, ms (0: none). */
  gapMs: number;
  /** 429s without Retry-After or a reset, each of which halved the rate (recovered step by step). */
  rateCuts: number;
  /**
   * The key's requests in flight at most, at the end: given (`--limiter concurrency:N`), told by a
   * policy in concurrent requests, or learned from 429s that came while others were in flight
   * (absent: no cap bound).
   */
  maxInFlight?: number;
  /** 429s that lowered the in-flight cap (absent when none did). */
  inFlightCuts?: number;
}

export interface WorkloadSummary {
  iterations: number;
  /** Open model: iterations not started because the in-flight cap was reached. */
  droppedIterations: number;
  failedIterations: number;
  flows: Record<string, { iterations: number; failures: number; firstError?: string }>;
}
