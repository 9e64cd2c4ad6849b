import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, Pool } from 'undici';
import { type AuthPlacement, authHeaders, samePlacement, withAuthQuery } from '../api/auth.ts';
import { DEFAULT_TIMEOUT_MS, DEFAULTS } from '../api/defaults.ts';
import type { LimiterKind } from '../api/limiter-kinds.ts';
import type { Operation } from '../api/operations.ts';
import { PACING_CAUSES, type PacingCause } from '../api/pacing-causes.ts';
import type { RateWindow } from '../api/plans.ts';
import { quotaState, type RateLimitView, readRateLimit, resetField } from '../api/rate-limit-dialect.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import type { TenantKey, TenantRef } from '../api/tenants.ts';
import type { AttemptSink } from '../record/attempt.ts';
import type { SpacingState } from './adaptive-spacing.ts';
import { fullJitterMs, RetryBudget } from './backoff.ts';
import { now } from './clock.ts';
import {
  AbortedError,
  type Admission,
  Gate,
  GateContext,
  HeldPastEndError,
  type SharedQuota,
} from './gate.ts';
import { Pacer, PacerPlan } from './pacer.ts';
import { ResponseBody } from './response-body.ts';
import { Scheduler } from './scheduler.ts';
import { type RawResponse, send } from './transport.ts';

export interface ClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; never written anywhere. */
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
  /** Retries after 429 per call (default 5): each waits at least the server's delay. */
  maxRateLimitRetries?: number;
  /** Full-jitter backoff for 5xx and transport errors (default 100 ms .. 10 s). */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /**
   * Full-jitter backoff for a 429 that gives neither Retry-After nor Reset (default 1 s .. 60 s):
   * slower than for 5xx because hurried retries after a 429 are what the seed's ban punishes.
   */
  rateLimitBackoffBaseMs?: number;
  rateLimitBackoffCapMs?: number;
  /** Share of requests that may be 5xx/transport retries (default 0.1). */
  retryBudget?: number;
  connections?: number;
  sink: AttemptSink;
  /**
   * A quota shared with other generators (worker threads, or machines through Redis): the client's
   * own key's only; a tenant's lane keeps its quota to itself (its key lives in one generator).
   */
  sharedQuota?: SharedQuota;
  /** What sends a request on the pool (tests and benches put a fake in; default undici's dispatch). */
  transport?: Transport;
}

/** Sends one request on the client's pool: `send` of transport.ts, or a test's fake. */
export type Transport = (pool: Pool, options: Dispatcher.DispatchOptions) => Promise<RawResponse>;

/** What a flow calls through: the client (its own key), or one tenant's lane of it. */
export interface Caller {
  /**
   * `scheduledAt`, when given, overrides `input.scheduledAt`: the engine passes an iteration's due
   * time here rather than copying the flow's input into a new object on every iteration.
   */
  call<T = unknown>(operationId: string, input?: CallInput, scheduledAt?: number): Promise<ApiResponse<T>>;
}

export interface CallInput {
  path?: Record<string, string | number>;
  query?: { [name: string]: string | number | boolean | undefined } | object;
  body?: unknown;
  /** Open model: when the iteration was due, for coordinated-omission-corrected response time. */
  scheduledAt?: number;
  /**
   * Deliberately bad requests (the compliance battery): `'none'` sends no Authorization header,
   * `{ key }` sends that key instead of the run's. Like the run's key, it is never recorded: the
   * attempt's key label says `free (no key)` or `free (another key)`, so that the checks that follow a
   * key's windows keep the server's other buckets apart, and pacing ignores their headers.
   */
  auth?: 'none' | { key: string };
  /** Sent as is instead of `JSON.stringify(body)` (invalid JSON on purpose); `body` is then ignored. */
  rawBody?: string;
  /** The Content-Type of a body (default `application/json`). */
  contentType?: string;
  /**
   * False: the first answer is returned as it is, a 429, a 5xx or a transport error included (no
   * retry). A 429 still pauses the key until its Retry-After: the ban guard holds either way.
   */
  retry?: boolean;
}

/** A response as a flow gets it; read-only, the body parsed when first read. */
export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: IncomingHttpHeaders;
  readonly body: T;
  /** Transport error code when status is 0. */
  readonly error?: string;
  readonly attempts: number;
}

/** A wait the run could not honour: until when (epoch ms), and who said so ('Retry-After 999999999 s'). */
export interface HeldPastEnd {
  until: number;
  by: string;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** A path template split once into literal text and parameter names: `/pets/{petId}` -> ['/pets/', 'petId', '']. */
type PathTemplate = string[];

function compilePath(path: string): PathTemplate {
  return path.split(/\{([^}]+)\}/);
}

function expandPath(
  op: Operation,
  template: PathTemplate,
  values: Record<string, string | number> = {},
): string {
  let out = template[0] as string;
  for (let i = 1; i < template.length; i += 2) {
    const name = template[i] as string;
    const value = values[name];
    if (value === undefined) throw new Error(`${op.id}: path parameter '${name}' is missing`);
    out += encodeURIComponent(String(value)) + (template[i + 1] as string);
  }
  return out;
}

function queryString(query: CallInput['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.append(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * What a call returns. A class, with the body behind a getter, because the body is parsed only if the
 * flow reads it (see ResponseBody) and an object literal with a getter costs V8 a runtime call on
 * every response.
 */
class Reply<T> implements ApiResponse<T> {
  readonly ok: boolean;
  // Declared, not initialised: a call without a transport error has no `error` key at all.
  declare readonly error?: string;
  readonly #payload: ResponseBody;

  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    payload: ResponseBody,
    readonly attempts: number,
    error: string | undefined,
  ) {
    this.ok = status >= 200 && status < 300;
    this.#payload = payload;
    if (error !== undefined) (this as { error?: string }).error = error;
  }

  /** The JSON body, or the text when the body is not JSON. */
  get body(): T {
    return (this.#payload.json ?? this.#payload.text) as T;
  }

  /** Logged or serialised, a response shows its body like its other fields. */
  toJSON(): ApiResponse<T> {
    const { status, ok, headers, body, attempts, error } = this;
    return { status, ok, headers, body, attempts, ...(error === undefined ? {} : { error }) };
  }
}

/**
 * What every key of a client shares: the connection pool, the sink, the retry budget, the run's
 * close, drain and interrupt, the scheduler of all waits, and the plans' pacing constants.
 */
class ClientCore {
  readonly operations: ReadonlyMap<string, Operation>;
  readonly templates: ReadonlyMap<Operation, PathTemplate>;
  readonly origin: string;
  readonly basePath: string;
  pool: Pool;
  readonly budget: RetryBudget;
  stop = new AbortController();
  readonly context = new GateContext(new Scheduler());
  readonly send: Transport;
  /** The latest hold that outlived a close, over every key. */
  held: HeldPastEnd | undefined;
  /** One PacerPlan per plan's windows (the same array for every tenant of a group) and mode. */
  private readonly plans = [new WeakMap<readonly RateWindow[], PacerPlan>(), new WeakMap()] as const;

  constructor(readonly options: ClientOptions) {
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/$/, '');
    this.operations = new Map(options.operations.map((op) => [op.id, op]));
    this.templates = new Map(options.operations.map((op) => [op, compilePath(op.path)]));
    this.pool = this.newPool();
    setMaxListeners(0, this.stop.signal);
    this.budget = new RetryBudget(options.retryBudget ?? 0.1);
    this.send = options.transport ?? send;
  }

  pacerPlan(windows: readonly RateWindow[], enforce: boolean): PacerPlan {
    const cache = this.plans[enforce ? 1 : 0];
    let plan = cache.get(windows);
    if (plan === undefined) {
      plan = new PacerPlan({
        windows,
        enforce,
        maxOvershoot: this.options.allowBanRisk ? Number.POSITIVE_INFINITY : undefined,
        limiter: this.options.limiter,
        maxInFlight: this.options.maxInFlight,
      });
      cache.set(windows, plan);
    }
    return plan;
  }

  newPool(): Pool {
    return new Pool(this.origin, { connections: this.options.connections ?? 64, keepAliveTimeout: 30_000 });
  }
}

/** A call's request, the same on every attempt. */
type PreparedRequest = Dispatcher.DispatchOptions & { headers: Record<string, string> };

const NO_RETRY: { retryAt?: number; pauseUntil?: number } = Object.freeze({});

/**
 * One API key's sends: its Pacer and Gate (pacing, server budget, 429 pause), its Authorization
 * header and its label in the records; everything else is the client's. The client's own key is one,
 * and a tenant mix has one per tenant: each holds its state itself, so that a request costs the same
 * whatever the number of keys (no lookup, no scan over keys), and a key that made a few requests
 * costs a few hundred bytes.
 */
export class Lane implements Caller {
  private readonly gate: Gate;
  /**
   * The headers of the first placement called (most documents have one for all), without and with a
   * JSON body; other placements' by operation, made only if the document has them: a tenant mix has
   * thousands of lanes, and each costs its headers.
   */
  private first:
    | { auth: AuthPlacement; plain: Record<string, string>; json?: Record<string, string> }
    | undefined;
  private others:
    | Map<Operation, { plain: Record<string, string>; json?: Record<string, string> }>
    | undefined;
  /** The latest 429's pause: until when, and what the server said (for a pause that outlives the run). */
  private pause: HeldPastEnd | undefined;

  constructor(
    private readonly core: ClientCore,
    private readonly apiKey: string | undefined,
    /** A tenant's key, or undefined for the client's own (labelled with `keyLabel`). */
    readonly tenant: TenantRef | undefined,
    plan: PacerPlan,
    shared: SharedQuota | undefined,
  ) {
    this.gate = new Gate(new Pacer(plan), shared, core.context);
  }

  /** The key's pacing: its own plan's windows, its own pauses. */
  get pacer(): Pacer {
    return this.gate.pacer;
  }

  /** How records name the key: the tenant's label (`pro#3`), or the client's (its plan). */
  get keyLabel(): string {
    return this.tenant === undefined ? this.core.options.keyLabel : this.tenant.label;
  }

  async call<T = unknown>(
    operationId: string,
    input: CallInput = {},
    scheduledAt?: number,
  ): Promise<ApiResponse<T>> {
    const core = this.core;
    const op = core.operations.get(operationId);
    if (!op) throw new Error(`unknown operation '${operationId}'`);
    const request = this.prepare(op, input);
    core.budget.request();
    // Response time runs from when the call was due (the open model's schedule) or made: a call that
    // waits behind a slow generator shows it. Retries are measured from their own send.
    const dueAt = scheduledAt ?? input.scheduledAt ?? now();
    const tries = { rateLimited: 0 };
    let extraBackoffMs = 0;

    // Read once per call: an interrupt aborts this signal and gives later calls a fresh one, so a
    // call caught in a wait, a backoff or a request ends, and calls made afterwards work.
    const signal = core.stop.signal;
    for (let attempt = 1; ; attempt++) {
      // The key's turn (pacing, server budget, a 429's pause), then one send; both inline, for the
      // promise an async helper would add to every request.
      let admission: Admission;
      try {
        admission = await this.gate.acquire(signal);
      } catch (error) {
        if (error instanceof HeldPastEndError) this.noteHeld(error);
        throw error;
      }
      const sentAt = now();
      let status = 0;
      let headers: IncomingHttpHeaders | undefined;
      let text = '';
      let errorCode: string | undefined;
      try {
        const response = await core.send(core.pool, request);
        status = response.status;
        headers = response.headers;
        text = response.text;
      } catch (error) {
        errorCode = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
      }
      const receivedAt = now();
      if (signal.aborted) {
        // Cut off by the end of the run: neither a response nor a transport error to count.
        this.pacer.observe(admission.seq, undefined, receivedAt);
        this.gate.responded();
        throw new AbortedError('run stopped');
      }
      // Read once, whatever dialect came: pacing steers by it, and the checks judge it from the record.
      const view = headers ? readRateLimit(headers, receivedAt) : undefined;
      const quota = view && view.dialect !== 'none' ? quotaState(view, receivedAt) : undefined;
      // Another key's (or no key's) headers describe another bucket: they must not steer this key's pacing.
      this.pacer.observe(admission.seq, input.auth === undefined ? quota : undefined, receivedAt, status);
      this.gate.responded();

      const payload = new ResponseBody(text, headers);
      const next =
        status === 429
          ? await this.pauseFor429(input, admission.seq, headers, receivedAt, view, tries)
          : this.retryAfterError(op, input, attempt, status, receivedAt);
      // Every field in one literal, in one order, `tenant` and `pauseUntil` included when undefined:
      // records of one shape keep the recorder's and the checks' property reads monomorphic, where
      // a spread for the pause and a tenant added afterwards made up to four shapes, each transition
      // a runtime call on every request.
      core.options.sink.record({
        operation: op,
        attempt,
        keyLabel: input.auth === undefined ? this.keyLabel : this.otherKeyLabel(input.auth),
        tenant: this.tenant,
        scheduledAt: attempt === 1 ? dueAt : undefined,
        sentAt,
        receivedAt,
        status,
        errorCode,
        headers,
        rateLimitView: view,
        body: payload,
        pacingWaitMs: admission.pacingWaitMs,
        backoffWaitMs: admission.backoffWaitMs + extraBackoffMs,
        pauseUntil: next.pauseUntil,
        retried: next.retryAt !== undefined,
      });

      if (next.retryAt === undefined) {
        return new Reply<T>(status, headers ?? {}, payload, attempt, errorCode);
      }
      if (status !== 429) {
        const before = now();
        await core.context.scheduler.sleepUntil(next.retryAt, signal);
        extraBackoffMs = now() - before;
      } else {
        extraBackoffMs = 0;
      }
    }
  }

  /** The request a call sends on every attempt: its path, body and headers. */
  private prepare(op: Operation, input: CallInput): PreparedRequest {
    const core = this.core;
    const o = core.options;
    const plain = `${core.basePath}${expandPath(op, core.templates.get(op) as PathTemplate, input.path)}${queryString(input.query)}`;
    // The key in the query (where the document puts it there) goes on the request only: records
    // and messages name the operation, never this path.
    const key = input.auth === undefined ? this.apiKey : input.auth === 'none' ? undefined : input.auth.key;
    const path = key === undefined ? plain : withAuthQuery(plain, op.auth, key);
    const body =
      input.rawBody !== undefined
        ? input.rawBody
        : input.body === undefined
          ? undefined
          : JSON.stringify(input.body);
    const headers =
      input.auth === undefined && input.contentType === undefined && input.rawBody === undefined
        ? this.headersFor(op, input.body !== undefined)
        : this.customHeaders(op, input, body !== undefined);
    return {
      path,
      method: op.method,
      headers,
      body,
      headersTimeout: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      bodyTimeout: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    };
  }

  /**
   * A 429 pauses the whole key, retried or not: no request of any virtual user leaves before its
   * delay ends (the ban guard). The call tries again after it, within its retries and the run.
   */
  private async pauseFor429(
    input: CallInput,
    seq: number,
    headers: IncomingHttpHeaders | undefined,
    receivedAt: number,
    view: RateLimitView | undefined,
    tries: { rateLimited: number },
  ): Promise<{ retryAt?: number; pauseUntil?: number }> {
    tries.rateLimited++;
    const delay = this.rateLimitDelay(seq, headers, view, receivedAt);
    const pauseUntil = receivedAt + delay.ms;
    if (pauseUntil > (this.pause?.until ?? 0)) this.pause = { until: pauseUntil, by: delay.by };
    this.pacer.pause(pauseUntil, receivedAt);
    // Every generator of the key holds too; awaited, so that none is told after its next send. A
    // store that cannot be told must not cost this attempt its record: this client's pause holds.
    await this.gate.sharePause(pauseUntil - receivedAt).catch(() => undefined);
    // A pause past the run's close is not waited for: the flow gets the 429 as it is.
    const again =
      (input.retry ?? true) &&
      tries.rateLimited <= (this.core.options.maxRateLimitRetries ?? 5) &&
      pauseUntil <= this.core.context.closesAt;
    return again ? { retryAt: pauseUntil, pauseUntil } : { pauseUntil };
  }

  /** A 5xx or transport error of an idempotent method is tried again, with full-jitter backoff, within the retry budget. */
  private retryAfterError(
    op: Operation,
    input: CallInput,
    attempt: number,
    status: number,
    receivedAt: number,
  ): { retryAt?: number; pauseUntil?: number } {
    const o = this.core.options;
    if (
      (input.retry ?? true) &&
      (status >= 500 || status === 0) &&
      IDEMPOTENT.has(op.method) &&
      attempt < (o.maxAttempts ?? DEFAULTS.maxAttempts) &&
      this.core.budget.tryRetry()
    )
      return {
        retryAt:
          receivedAt +
          fullJitterMs(
            attempt,
            o.backoffBaseMs ?? DEFAULTS.backoffBaseMs,
            o.backoffCapMs ?? DEFAULTS.backoffCapMs,
          ),
      };
    return NO_RETRY;
  }

  /** An operation's headers with the key where its document puts it, made on its first call. */
  private headersFor(op: Operation, json: boolean): Record<string, string> {
    const entry = this.entryFor(op);
    if (!json) return entry.plain;
    entry.json ??= { ...entry.plain, 'content-type': 'application/json' };
    return entry.json;
  }

  private entryFor(op: Operation): { plain: Record<string, string>; json?: Record<string, string> } {
    if (this.first === undefined) {
      this.first = { auth: op.auth, plain: this.plainHeaders(op.auth) };
      return this.first;
    }
    if (samePlacement(this.first.auth, op.auth)) return this.first;
    this.others ??= new Map();
    let entry = this.others.get(op);
    if (entry === undefined) {
      entry = { plain: this.plainHeaders(op.auth) };
      this.others.set(op, entry);
    }
    return entry;
  }

  private plainHeaders(auth: AuthPlacement): Record<string, string> {
    return {
      accept: 'application/json',
      ...(this.apiKey === undefined ? {} : authHeaders(auth, this.apiKey)),
    };
  }

  /** `free (no key)`, `pro#3 (another key)`: a deliberately bad request's label, never its key. */
  private otherKeyLabel(auth: NonNullable<CallInput['auth']>): string {
    return `${this.keyLabel} (${auth === 'none' ? 'no key' : 'another key'})`;
  }

  /** Headers of a deliberately unusual request: another key or none, another content type. */
  private customHeaders(op: Operation, input: CallInput, hasBody: boolean): Record<string, string> {
    const auth = input.auth;
    const key = auth === undefined ? this.apiKey : auth === 'none' ? undefined : auth.key;
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...(key === undefined ? {} : authHeaders(op.auth, key)),
    };
    if (hasBody || input.contentType !== undefined)
      headers['content-type'] = input.contentType ?? 'application/json';
    return headers;
  }

  /**
   * How long a 429 pauses the key: Retry-After if valid (never shortened), else until the reset its
   * rate-limit fields announce (in any dialect), else exponential backoff with full jitter; and which
   * of them said so, as the server wrote it. A small margin covers the server's clock granularity
   * (its headers are whole seconds).
   */
  private rateLimitDelay(
    seq: number,
    headers: IncomingHttpHeaders | undefined,
    view: RateLimitView | undefined,
    at: number,
  ): { ms: number; by: string } {
    const margin = 5;
    const retryAfter = parseRetryAfter(headers?.['retry-after']);
    const reset = view ? quotaState(view, at).reset : undefined;
    const toldReset = view !== undefined && reset !== undefined && reset * 1000 > at;
    // The key's 429s in a row, not this call's: a headerless limiter met by many calls sees the
    // backoff grow, where each call restarting at the base would hit it again and again.
    // A 429 whose own answer shows requests left was not the window's: another limit refused it.
    const quotaLeft = view !== undefined && view.remaining !== undefined && view.remaining > 0;
    const retries = this.pacer.rateLimited(seq, retryAfter !== undefined || toldReset, at, quotaLeft);
    if (retryAfter)
      return {
        ms: retryAfterDelayMs(retryAfter, at) + margin,
        by: `Retry-After ${retryAfter.form === 'seconds' ? `${retryAfter.seconds} s` : String(headers?.['retry-after']).trim()}`,
      };
    if (toldReset) {
      const told = view.dialect.startsWith('ietf')
        ? `${view.resetSeconds} s`
        : String(headers?.['x-ratelimit-reset']).trim();
      return { ms: reset * 1000 - at + margin, by: `${resetField(view)} ${told}` };
    }
    const o = this.core.options;
    return {
      ms: fullJitterMs(retries, o.rateLimitBackoffBaseMs ?? 1000, o.rateLimitBackoffCapMs ?? 60_000) + margin,
      by: `backoff after ${retries} 429${retries === 1 ? '' : 's'}`,
    };
  }

  /** What held a send past the run's close, in the server's words where it was a 429's pause. */
  private noteHeld(error: HeldPastEndError): void {
    const by =
      error.heldBy === 'pause'
        ? (this.pause?.by ?? 'a pause shared by another generator')
        : error.heldBy === 'budget'
          ? 'X-RateLimit-Remaining spent until X-RateLimit-Reset'
          : "the plan's quota";
    const core = this.core;
    if (error.until >= (core.held?.until ?? 0)) core.held = { until: error.until, by };
  }

  /** What the key's pacing learned of the server's limiter (the gap between sends, the rate cuts). */
  spacingState(): SpacingState {
    return this.pacer.spacingState();
  }

  /**
   * What holds the key's next request back right now (for the live status line): nothing ('ready'),
   * even spacing ('pacing'), the server's remaining budget ('budget'), a 429's pause ('pause', until
   * `until`), or requests in flight that must answer first ('inflight').
   */
  pacingState(at: number = now()): { cause: PacingCause; until: number } {
    // Only a look: the raw-mode window a lapsed budget assumes starts at a send, not at a status line.
    const { at: until, cause } = this.pacer.earliest(at, true);
    return { cause, until };
  }
}

/**
 * How many of a tenant mix's keys each cause holds back right now: its live state in one line,
 * where one key's state would say nothing (a thousand keys, a few of them paused after a 429).
 */
export function keysByCause(lanes: Iterable<Lane>, at: number = now()): Record<PacingCause, number> {
  const counts = Object.fromEntries(PACING_CAUSES.map((c) => [c, 0])) as Record<PacingCause, number>;
  for (const lane of lanes) counts[lane.pacingState(at).cause]++;
  return counts;
}

/**
 * The plan-aware client: every request of a key passes its Gate (pacing, server budget, 429 pause),
 * every attempt goes to the recorder, and 429s, 5xx and transport errors are retried under the rules
 * below rather than surfaced to the scenario as failures it must handle. `call` sends with the
 * client's own key; `lane(tenant)` gives a tenant's key its own pacing beside it.
 */
export class ApiClient implements Caller {
  readonly operations: ReadonlyMap<string, Operation>;
  private readonly core: ClientCore;
  private readonly own: Lane;

  constructor(options: ClientOptions) {
    const core = new ClientCore(options);
    this.core = core;
    this.operations = core.operations;
    this.own = new Lane(
      core,
      options.apiKey,
      undefined,
      core.pacerPlan(options.windows, options.enforce ?? true),
      options.sharedQuota,
    );
  }

  call<T = unknown>(operationId: string, input?: CallInput, scheduledAt?: number): Promise<ApiResponse<T>> {
    return this.own.call<T>(operationId, input, scheduledAt);
  }

  /**
   * A key of a tenant mix: its own Pacer (its plan's windows, raw mode for `enforce: false`; the ban
   * guard stays), Gate, 429 pause and Authorization header; the pool, the sink, the retry budget and
   * the run's close, drain and interrupt are the client's. Its attempts carry the tenant's label and
   * the tenant. Cheap (a few hundred bytes, no timer): build one per tenant up front. A lane never
   * goes through the shared quota store: a mix is spread over workers and generators by its keys, so
   * each key lives in one generator and its quota is already one (and a send costs no round trip).
   */
  lane(t: TenantKey): Lane {
    const core = this.core;
    return new Lane(core, t.key, t.tenant, core.pacerPlan(t.tenant.windows, t.tenant.enforce), undefined);
  }

  /** The one scheduler every wait of this client's keys goes through (pacing, pauses, backoff). */
  get scheduler(): Scheduler {
    return this.core.context.scheduler;
  }

  /**
   * Sends that cannot leave by `at` (epoch ms) fail at once with HeldPastEndError rather than wait:
   * the run sets its workload's end (grace included), its setup's and its teardown's limits. Every
   * lane reads it from one shared place.
   */
  closeAt(at: number): void {
    this.core.context.closesAt = at;
  }

  /**
   * On: no new send leaves, on any lane (each ends at once with AbortedError), while requests in
   * flight may still answer and be recorded; waits under way end at their next look at the pacer. An
   * interrupt drains the workload so that its grace is spent on answers, not on new requests.
   */
  drain(on: boolean): void {
    this.core.context.draining = on;
  }

  /** What the client's own key's pacing learned of the server's limiter. */
  spacingState(): SpacingState {
    return this.own.spacingState();
  }

  /** The latest hold, over every lane, that outlived a close: a pause, or a quota, the run could not wait out. */
  heldPastEnd(): HeldPastEnd | undefined {
    return this.core.held;
  }

  /** What holds the client's own key's next request back right now (for the live status line). */
  pacingState(): { cause: PacingCause; until: number } {
    return this.own.pacingState();
  }

  /**
   * Ends every wait (pacing, pause, backoff) and every request in flight, on every lane, with
   * AbortedError; calls made afterwards work as before. A run calls it when its time is up and the
   * grace has passed.
   */
  interrupt(): void {
    const core = this.core;
    core.stop.abort();
    core.stop = new AbortController();
    setMaxListeners(0, core.stop.signal);
    // Requests in flight end with the old pool. Destroying a pool, rather than giving every request
    // an AbortSignal, keeps a listener registration off each request of the hot path.
    const old = core.pool;
    core.pool = core.newPool();
    old.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.core.pool.close();
  }
}
