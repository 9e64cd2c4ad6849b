/**
 * Every metric a run pushes: name, type, labels (beyond the identity labels every series carries) and
 * help, in one table. The README's table is copied from this list by hand; the remote-write metadata
 * is sent from it.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface Family {
  name: string;
  type: MetricType;
  /** Labels of its own; `scenario`, `run_id`, `target` and `plan` are on every series (IDENTITY_LABELS). */
  labels: readonly string[];
  help: string;
}

/** On every series. `plan` is the run's plan, or a tier's for the `tier_` families. */
export const IDENTITY_LABELS = ['scenario', 'run_id', 'target', 'plan'] as const;

export const PREFIX = 'petstore_load_';

const family = (name: string, type: MetricType, labels: readonly string[], help: string): Family => ({
  name: PREFIX + name,
  type,
  labels,
  help,
});

export const FAMILIES = {
  requests: family(
    'requests_total',
    'counter',
    ['operation', 'status_class'],
    'Attempts answered, retries and setup included, by status class (1xx..5xx; error: a transport error)',
  ),
  rateLimited: family(
    'rate_limited_total',
    'counter',
    ['operation'],
    "The limiter's refusals: 429s, and 503s or 403s that said so or --refusal-status named",
  ),
  retries: family('retries_total', 'counter', ['operation'], 'Attempts followed by a retry'),
  errors: family(
    'errors_total',
    'counter',
    ['operation', 'kind'],
    'Failures of the target: 5xx responses (kind: the status) and transport errors (kind: the code)',
  ),
  checkFailures: family(
    'check_failures_total',
    'counter',
    ['operation'],
    'Responses that failed at least one check',
  ),
  violations: family(
    'violations_total',
    'counter',
    [],
    "Requests sent inside a 429's Retry-After window (or the pause the client chose for it)",
  ),
  pacingWait: family(
    'pacing_wait_seconds_total',
    'counter',
    ['operation'],
    "Time requests waited for the plan's pacing",
  ),
  backoffWait: family(
    'backoff_wait_seconds_total',
    'counter',
    ['operation'],
    'Time requests waited after 429s and errors (Retry-After, reset, backoff)',
  ),
  serviceTime: family(
    'service_time_seconds',
    'histogram',
    ['operation'],
    'Sent to received: what the server and the network took',
  ),
  responseTime: family(
    'response_time_seconds',
    'histogram',
    ['operation'],
    'Due to received, less pacing and backoff waits (corrected for coordinated omission)',
  ),
  admitted: family(
    'admitted_total',
    'counter',
    [],
    'Responses the limiter let through while the workload ran (not its refusals, no transport error): what the quota admitted',
  ),
  utilisation: family(
    'quota_utilisation_ratio',
    'gauge',
    ['window'],
    "Share of the window's quota admitted over the last window (so far, in a run younger than the window)",
  ),
  remaining: family(
    'quota_remaining',
    'gauge',
    ['key_group'],
    'The Remaining the server announced last, per key group (a plan, or a tenant tier: its first key)',
  ),
  pacingState: family(
    'pacing_state',
    'gauge',
    ['cause'],
    "1 for what holds the key's next request back now (ready, pacing, budget, pause, inflight), else 0; in a tenant mix, how many keys each holds back",
  ),
  tierRequests: family('tier_requests_total', 'counter', ['group'], 'A tenant tier: attempts answered'),
  tierRateLimited: family('tier_rate_limited_total', 'counter', ['group'], 'A tenant tier: 429 responses'),
  tierErrors: family(
    'tier_errors_total',
    'counter',
    ['group'],
    'A tenant tier: 5xx responses and transport errors',
  ),
  tierViolations: family(
    'tier_violations_total',
    'counter',
    ['group'],
    "A tenant tier: requests sent inside a 429's Retry-After window",
  ),
  tierAdmitted: family(
    'tier_admitted_total',
    'counter',
    ['group'],
    'A tenant tier: responses other than 429 and transport errors while the workload ran',
  ),
  tierUtilisation: family(
    'tier_quota_utilisation_ratio',
    'gauge',
    ['group'],
    "A tenant tier: admitted rate since the previous push over what its keys' plan allows them together",
  ),
  tierResponseTime: family(
    'tier_response_time_seconds',
    'histogram',
    ['group'],
    'A tenant tier: due to received, less pacing and backoff waits',
  ),
  droppedSamples: family(
    'metrics_dropped_samples_total',
    'counter',
    ['sink'],
    'Samples this sink (its place among the --metrics flags) dropped: its queue was full, the endpoint refused them for good, or the run ended first',
  ),
} as const satisfies Record<string, Family>;
