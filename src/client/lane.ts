import type { IncomingHttpHeaders } from 'node:http';
import { DEFAULT_TIMEOUT_MS } from '../api/defaults.ts';
import type { Operation } from '../api/operations.ts';
import { PACING_CAUSES, type PacingCause } from '../api/pacing-causes.ts';
import { quotaState, type RateLimitView, readRateLimit } from '../api/rate-limit-dialect.ts';
import { KeyRequests } from '../api/request.ts';
import { classifyResponse, keepsAway, type ResponseKind } from '../api/responses.ts';
import type { TenantRef } from '../api/tenants.ts';
import type { Protocol } from '../transport/dispatcher.ts';
import type { SpacingState } from './adaptive-spacing.ts';
import type { ClientCore } from './client-core.ts';
import type { ApiResponse, Caller, CallInput, HeldPastEnd } from './client-types.ts';
import { now } from './clock.ts';
import { AbortedError, type Admission, Gate, HeldPastEndError, type SharedQuota } from './gate.ts';
import { Pacer, type PacerPlan } from './pacer.ts';
import { Reply } from './reply.ts';
import { ResponseBody } from './response-body.ts';
import { type NextStep, refusalDelay, retryAfterError, retryAfterRefusal } from './retry-policy.ts';

/**
 * One API key's sends: its Pacer and Gate (pacing, server budget, 429 pause), its requests (the key
 * where each operation's scheme puts it, see src/api/request.ts) and its label in the records;
 * everything else is the client's. The client's own key is one, and a tenant mix has one per tenant:
 * each holds its state itself, so that a request costs the same whatever the number of keys (no
 * lookup, no scan over keys), and a key that made a few requests costs a few hundred bytes.
 */
export class Lane implements Caller {
  private readonly core: ClientCore;
  /** A tenant's key, or undefined for the client's own (labelled with `keyLabel`). */
  readonly tenant: TenantRef | undefined;
  private readonly gate: Gate;
  /** The key's headers, made once per placement its operations use and sent as they are. */
  private readonly requests: KeyRequests;
  /** The latest 429's pause: until when, and what the server said (for a pause that outlives the run). */
  private pause: HeldPastEnd | undefined;

  constructor(
    core: ClientCore,
    apiKey: string | undefined,
    tenant: TenantRef | undefined,
    plan: PacerPlan,
    shared: SharedQuota | undefined,
  ) {
    this.core = core;
    this.tenant = tenant;
    this.gate = new Gate(new Pacer(plan), shared, core.context);
    this.requests = new KeyRequests(apiKey);
  }

  /** The key's pacing: its own plan's windows, its own pauses. */
  get pacer(): Pacer {
    return this.gate.pacer;
  }

  preparing(on: boolean): void {
    this.gate.pacer.preparing = on;
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
    const timeoutMs = core.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const request = this.requests.build(core.basePath, op, input, timeoutMs, core.templates.get(op));
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
      let protocol: Protocol | undefined;
      try {
        const response = await core.send(core.pool, request, this.pacer, admission.seq);
        status = response.status;
        headers = response.headers;
        text = response.text;
        protocol = response.protocol;
      } catch (error) {
        errorCode = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
      }
      const receivedAt = now();
      const payload = new ResponseBody(text, headers);
      const { view, kind } = this.observe(admission.seq, input, headers, status, payload, receivedAt, signal);
      const asError = () => this.afterError(op, input, attempt, kind, receivedAt);
      const next = keepsAway(kind)
        ? await this.pauseAfterRefusal(input, admission.seq, headers, receivedAt, view, tries, kind, asError)
        : asError();
      // Every field in one literal, in one order, `tenant` and `pauseUntil` included when undefined:
      // records of one shape keep the recorder's and the checks' reads monomorphic (a spread for the
      // pause and a tenant added afterwards made four shapes, each a runtime call per request).
      core.options.sink.record({
        operation: op,
        attempt,
        keyLabel: input.auth === undefined ? this.keyLabel : this.otherKeyLabel(input.auth),
        tenant: this.tenant,
        scheduledAt: attempt === 1 ? dueAt : undefined,
        sentAt,
        receivedAt,
        status,
        kind,
        errorCode,
        protocol,
        headers,
        rateLimitView: view,
        body: payload,
        pacingWaitMs: admission.pacingWaitMs,
        budgetWaitMs: admission.budgetWaitMs,
        backoffWaitMs: admission.backoffWaitMs + extraBackoffMs,
        pauseUntil: next.pauseUntil,
        retried: next.retryAt !== undefined,
      });
      if (next.retryAt === undefined) return new Reply<T>(status, headers ?? {}, payload, attempt, errorCode);
      // A refusal's pause is waited in the gate, where the next attempt's turn comes; other retries here.
      extraBackoffMs = keepsAway(kind) ? 0 : await this.backoff(next.retryAt, signal);
    }
  }

  /** Whether a call that met an error goes again, and when: setup's and teardown's by their rule. */
  private afterError(
    op: Operation,
    input: CallInput,
    attempt: number,
    kind: ResponseKind,
    receivedAt: number,
  ) {
    const core = this.core;
    return retryAfterError(
      core.options,
      core.budget,
      op,
      input,
      attempt,
      kind,
      receivedAt,
      this.pacer.preparing,
    );
  }

  /**
   * An answer's rate-limit fields, read once whatever dialect came: pacing steers by them, and the
   * checks judge them from the record. An answer cut off by the end of the run is neither a response
   * nor a transport error to count: the call ends there.
   */
  private observe(
    seq: number,
    input: CallInput,
    headers: IncomingHttpHeaders | undefined,
    status: number,
    body: ResponseBody,
    receivedAt: number,
    signal: AbortSignal,
  ): { view: RateLimitView | undefined; kind: ResponseKind } {
    if (signal.aborted) {
      this.pacer.observe(seq, undefined, receivedAt, 'transport-error');
      this.gate.responded();
      throw new AbortedError('run stopped');
    }
    const view = headers ? readRateLimit(headers, receivedAt) : undefined;
    const kind = classifyResponse({ status, headers, view, body }, this.core.options.refusalStatuses);
    const quota = view && view.dialect !== 'none' ? quotaState(view, receivedAt, headers) : undefined;
    // Another key's (or no key's) headers describe another bucket: they must not steer this key's pacing.
    this.pacer.observe(seq, input.auth === undefined ? quota : undefined, receivedAt, kind);
    this.gate.responded();
    return { view, kind };
  }

  /** Waits out a retry's backoff; how long it took. */
  private async backoff(until: number, signal: AbortSignal): Promise<number> {
    const before = now();
    await this.core.context.scheduler.sleepUntil(until, signal);
    return now() - before;
  }

  /**
   * A refusal (or a bare 503, which may be one) pauses the whole key, retried or not: no request of
   * any virtual user leaves before its delay ends (the ban guard). The call tries again after it,
   * within its retries and the run.
   */
  private async pauseAfterRefusal(
    input: CallInput,
    seq: number,
    headers: IncomingHttpHeaders | undefined,
    receivedAt: number,
    view: RateLimitView | undefined,
    tries: { rateLimited: number },
    kind: ResponseKind,
    asError: () => NextStep,
  ): Promise<NextStep> {
    tries.rateLimited++;
    const o = this.core.options;
    const delay = refusalDelay(o, this.pacer, seq, headers, view, receivedAt);
    const pauseUntil = receivedAt + delay.ms;
    if (pauseUntil > (this.pause?.until ?? 0))
      this.pause = { until: pauseUntil, by: delay.by, cause: 'pause' };
    this.pacer.pause(pauseUntil, receivedAt);
    // Every generator of the key holds too; awaited, so that none is told after its next send. A
    // store that cannot be told must not cost this attempt its record: this client's pause holds.
    await this.gate.sharePause(pauseUntil - receivedAt).catch(() => undefined);
    // A bare 503 may be overload: the key keeps away as after a refusal, but the call tries again
    // only as after a 5xx (an idempotent method, within its attempts and the retry budget).
    if (kind === 'unexplained') return retriedAsError(pauseUntil, asError());
    return retryAfterRefusal(o, input, tries.rateLimited, pauseUntil, this.core.context.closesAt);
  }

  /** `free (no key)`, `pro#3 (another key)`: a deliberately bad request's label, never its key. */
  private otherKeyLabel(auth: NonNullable<CallInput['auth']>): string {
    return `${this.keyLabel} (${auth === 'none' ? 'no key' : 'another key'})`;
  }

  /**
   * What held a send past the run's close, in the server's words where the server held it: a
   * refusal's pause (`Retry-After 999999999 s`), or its told budget in the fields it sent
   * (`RateLimit remaining=0, reset=10`).
   */
  private noteHeld(error: HeldPastEndError): void {
    const cause = error.heldBy === 'pause' || error.heldBy === 'budget' ? error.heldBy : 'pacing';
    const by =
      this.heldBy(cause) ??
      (cause === 'pause'
        ? 'a pause shared by another generator'
        : cause === 'budget'
          ? "the server's Remaining spent until its Reset"
          : this.pacer.options.enforce
            ? "the plan's quota"
            : 'the gap kept between sends');
    const core = this.core;
    if (error.until >= (core.held?.until ?? 0)) core.held = { until: error.until, by, cause };
  }

  /**
   * What the server said that holds the key, for a line to name: a refusal's pause (`Retry-After
   * 12 s`, `backoff after 2 refusals`), or the fields of the answer that spent its told budget.
   * Built when asked, never per response.
   */
  heldBy(cause: PacingCause): string | undefined {
    if (cause === 'pause') return this.pause?.by;
    if (cause === 'budget') return this.pacer.toldFields();
    return undefined;
  }

  /** Wall time the server's told budget held this key up to `at`, ms (see Gate.budgetHeld). */
  budgetHeld(at: number = now()): number {
    return this.gate.budgetHeld(at);
  }

  /** The fields of the answer that set the key's latest hold by its told budget, as sent. */
  get budgetTold(): string | undefined {
    return this.gate.budgetTold;
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

/** A bare 503's pause, and its retry only where a 5xx's would go: once the pause (its backoff) is over. */
function retriedAsError(pauseUntil: number, asError: NextStep): NextStep {
  return asError.retryAt === undefined ? { pauseUntil } : { retryAt: pauseUntil, pauseUntil };
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
