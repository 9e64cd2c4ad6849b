import type { Dispatcher } from 'undici';
import type { ApiResponse, CallInput } from '../api/call-types.ts';
import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { Operation } from '../api/operations.ts';
import type { RateWindow } from '../api/plans.ts';
import type { RefusalStatuses } from '../api/responses.ts';
import type { AttemptSink } from '../record/attempt.ts';
import type { NetworkOptions } from '../transport/network.ts';
import type { SharedQuota } from './gate.ts';
import type { Departures, RawResponse } from './transport.ts';

export interface ClientOptions {
  baseUrl: string;
  /**
   * Sent where each operation's security scheme puts it (`Authorization: Bearer <key>` unless the
   * document or `--auth-header` says otherwise); never written anywhere.
   */
  apiKey: string | undefined;
  /** Names the key in results instead of the key itself (the plan name). */
  keyLabel: string;
  operations: Operation[];
  /** The plan's windows, time-scaled to the target's clock. */
  windows: RateWindow[];
  /** Pacing on (default) or raw mode. The ban guard is on in both unless `allowBanRisk`. */
  enforce?: boolean;
  allowBanRisk?: boolean;
  /** The server's limiter, when known (`--limiter`); else learned from its 429s. */
  limiter?: LimiterKind;
  /** `--limiter concurrency:N`: each key's requests in flight at most, from the start. */
  maxInFlight?: number;
  timeoutMs?: number;
  /** Attempts for 5xx and transport errors on idempotent methods (default 3). */
  maxAttempts?: number;
  /** Statuses the target refuses with besides a 429 (`--refusal-status`): the limiter's, always. */
  refusalStatuses?: RefusalStatuses;
  /** Retries after a refusal per call (default 5): each waits at least the server's delay. */
  maxRateLimitRetries?: number;
  /** Full-jitter backoff for 5xx and transport errors (default 100 ms .. 10 s). */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /**
   * Full-jitter backoff after a refusal that gives neither Retry-After nor Reset (default 1 s .. 60 s):
   * slower than for 5xx because hurried retries after a refusal are what the seed's ban punishes.
   */
  rateLimitBackoffBaseMs?: number;
  rateLimitBackoffCapMs?: number;
  /** Share of requests that may be 5xx/transport retries (default 0.1). */
  retryBudget?: number;
  connections?: number;
  /** TLS, HTTP/2 and a proxy (`--ca`, `--insecure`, `--cert`, `--http2`, `--proxy`...): Node's defaults without. */
  network?: NetworkOptions | undefined;
  sink: AttemptSink;
  /**
   * A quota shared with other generators (worker threads, or machines through Redis): the client's
   * own key's only; a tenant's lane keeps its quota to itself (its key lives in one generator).
   */
  sharedQuota?: SharedQuota;
  /** What sends a request on the pool (tests and benches put a fake in; default undici's dispatch). */
  transport?: Transport;
}

/**
 * Sends one request on the client's pool: `send` of transport.ts, or a test's fake; `departures` is
 * told when send `seq` is written (a fake, in simulated time, may leave it untold).
 */
export type Transport = (
  pool: Dispatcher,
  options: Dispatcher.DispatchOptions,
  departures?: Departures,
  seq?: number,
) => Promise<RawResponse>;

/** What a flow calls through: the client (its own key), or one tenant's lane of it. */
export interface Caller {
  /**
   * `scheduledAt`, when given, overrides `input.scheduledAt`: the engine passes an iteration's due
   * time here rather than copying the flow's input into a new object on every iteration.
   */
  call<T = unknown>(operationId: string, input?: CallInput, scheduledAt?: number): Promise<ApiResponse<T>>;
  /** On while a run's setup or teardown calls through it: raw mode keeps the plan's gaps then. */
  preparing?(on: boolean): void;
}

/**
 * A wait the run could not honour: until when (epoch ms), who said so ('Retry-After 999999999 s',
 * 'RateLimit remaining=0, reset=10'), and what it was: a refusal's pause, the server's told budget
 * spent until its reset, or the client's own pacing.
 */
export interface HeldPastEnd {
  until: number;
  by: string;
  cause: 'pause' | 'budget' | 'pacing';
}

export type { ApiResponse, CallInput };
