import type { Dispatcher } from 'undici';
import { DEFAULT_TIMEOUT_MS } from '../api/defaults.ts';
import { type Dialect, quotaState, type RateLimitView, readRateLimit } from '../api/rate-limit-dialect.ts';
import type { RateLimitState } from '../api/rate-limit-headers.ts';
import { type BuiltRequest, KeyRequests } from '../api/request.ts';
import {
  classifyResponse,
  keepsAway,
  passedLimiter,
  type RefusalStatuses,
  type ResponseKind,
} from '../api/responses.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import type { Transport } from '../client/client.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { ResponseBody } from '../client/response-body.ts';
import { senderFor } from '../client/transport.ts';
import type { AttemptSink } from '../record/attempt.ts';
import { newDispatcher, type Protocol } from '../transport/dispatcher.ts';
import type { NetworkOptions } from '../transport/network.ts';
import type { ProbedOperation } from './probed-operation.ts';

/** One answer, as the capacity phases need it. */
export interface ProbeReply {
  index: number;
  status: number;
  /** What the answer meant (src/api/responses.ts). */
  kind: ResponseKind;
  sentAt: number;
  /** When its headers were written to the socket: after a new connection's setup, and any local queue. */
  writtenAt?: number;
  receivedAt: number;
  /** The quota as the answer's dialect told it; `reset` is a Unix time in seconds whatever the dialect. */
  rateLimit: RateLimitState;
  /** The rate-limit fields as read, whatever the dialect (absent only in hand-made replies). */
  view?: RateLimitView;
  /** ms to wait after a 429 or 403 (Retry-After, else the announced reset, else our own backoff). */
  retryAfterMs: number | undefined;
  /** The refusal carried a usable Retry-After (not derived from a reset or chosen by us). */
  hasRetryAfter: boolean;
  /** The Error body's `code`, when a refusal had one. */
  code: string | undefined;
  /** The client's admittedTotal once this answer was counted. */
  admittedSoFar: number;
}

/** A request as the rate search replays it: when it was written to its socket, and whether it was admitted. */
export interface Shot {
  at: number;
  admitted: boolean;
  /** When its answer came: the limiter counted it between `at` and then. */
  answeredAt?: number;
}

export interface ProbeClientOptions {
  baseUrl: string;
  apiKey: string;
  /** The window a refusal that announces no wait is waited out for, while `quietBackoff` is 'window'. */
  windowMs: number;
  /** The request every probe sends: the pet store's page of one pet, or the user's operation (`--spec`). */
  probe: ProbedOperation;
  /** Where attempts are recorded (the ban probe records none: it breaks the client rules on purpose). */
  sink?: AttemptSink;
  keyLabel: string;
  maxInFlight?: number;
  timeoutMs?: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: RefusalStatuses;
  /** Sends one request on the pool: a real socket by default, a test's simulated target otherwise. */
  transport?: Transport;
  /** TLS, HTTP/2 and a proxy, as the run's client has them. */
  network?: NetworkOptions | undefined;
}

/** Admitted: the limiter let it through (src/api/responses.ts), so it counts against the quota. */
export const admitted = (r: { kind: ResponseKind }) => passedLimiter(r.kind);

/**
 * The limiter's refusal, or a bare 503 the probe treats as one: a limiter that refuses with 503 is
 * probed as one that refuses with 429, and the report names the status it refused with.
 */
export const refused = (r: { kind: ResponseKind }) => keepsAway(r.kind);

/** After a refusal that announced nothing, the search waits this many times the gap it probed, and more. */
export const QUIET_BACKOFF_FACTOR = 1.5;
const QUIET_BACKOFF_MIN_MS = 10;

/** Answers kept for the replay: the phases that measure the limiter send far fewer (a daily walk may send more). */
const HISTORY_MAX = 20_000;

const EMPTY_STATE: RateLimitState = { limit: undefined, remaining: undefined, reset: undefined };

/**
 * One key's requests for the capacity phases: the probed operation each (the pet store's GET of one
 * pet's page unless `--spec` named another), over its own pool. It
 * keeps the ban guard (after a refusal nothing leaves before its Retry-After) and the in-flight gate
 * that lowers concurrency as a window runs out.
 */
export class ProbeClient {
  pauseUntil = 0;
  /** Requests that left inside a Retry-After although they were not meant to (must stay 0). */
  violations = 0;
  /** Requests the target admitted, over the client's life: what they took from the daily quota. */
  admittedTotal = 0;
  /**
   * How long a refusal that announced no wait (no Retry-After, no reset) holds the key: a whole
   * window (pacing, the daily walk: a refusal there means the plan is not kept), or, while the
   * limiter is being measured, 1.5 times the gap since the last admitted request (that gap is what
   * the probe was asking about, and waiting longer than it answers the next question).
   */
  quietBackoff: 'window' | 'gap' = 'window';
  /** When given, every answered request is appended: the rate search replays them. */
  shots: Shot[] | undefined;
  /** Every answered request of the probe, up to HISTORY_MAX: what a model must predict (replay.ts). */
  readonly history: Shot[] = [];
  /** Every Limit the headers told: more than one where several windows are enforced at once. */
  readonly limitsTold = new Set<number>();
  /** The statuses of the limiter's refusals (and bare 503s), with how many of each. */
  readonly refusedWith = new Map<number, number>();
  /** When the latest answered request was written, and when the latest admitted one was sent. */
  lastWrittenAt = 0;
  lastAdmittedAt = 0;
  /** Answers per dialect, and the dialects that announced a reset: what the report says the target speaks. */
  readonly dialects = new Map<Dialect | 'none', number>();
  readonly resetDialects = new Set<Dialect>();
  /**
   * Requests of the key the target lets be in flight at once, once the concurrency probe found a
   * limit: the gate never goes beyond it, and without a Remaining to follow it goes up to it.
   */
  concurrency: number | undefined;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private readonly pool: Dispatcher;
  private readonly send: Transport;
  /** The one request every probe sends, its id header aside. */
  private readonly template: BuiltRequest;
  private readonly cap: number;
  private readonly o: ProbeClientOptions;

  constructor(o: ProbeClientOptions) {
    this.o = o;
    const url = new URL(o.baseUrl);
    this.cap = o.maxInFlight ?? 32;
    this.pool = newDispatcher(url.origin, { connections: this.cap, keepAliveTimeout: 30_000 }, o.network);
    this.send = o.transport ?? senderFor(o.network);
    // The key where the probed operation's document puts it; the path is sent, never recorded.
    this.template = new KeyRequests(o.apiKey).build(
      url.pathname.replace(/\/$/, ''),
      o.probe.operation,
      o.probe.input,
      o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Waits for room: at most `cap` in flight, and no more than the window has left (one at a time near its end). */
  async slot(known: () => number | undefined): Promise<void> {
    for (;;) {
      const left = known();
      const most = Math.min(this.cap, this.concurrency ?? this.cap);
      const room =
        left === undefined ? Math.min(most, this.concurrency ?? 1) : Math.max(1, Math.min(most, left));
      if (this.inFlight < room) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * `insidePause`: leave at once even inside a Retry-After, on purpose: the ban probe, on the key
   * the user named for being banned, and the one request inside a block (probeBlock). Such a request
   * is not recorded: it is no client's conduct to judge, and what it found is in the report.
   */
  async request(index: number, insidePause = false): Promise<ProbeReply> {
    // In flight from now, not from when it leaves: a request waiting out a pause holds its slot, so
    // that requests queued behind a 429 cannot all leave together when the pause ends.
    this.inFlight++;
    // Timers may fire a fraction of a millisecond early: wait until the clock says so.
    if (!insidePause) while (now() < this.pauseUntil) await sleepUntil(this.pauseUntil + 1);
    const sentAt = now();
    if (!insidePause && sentAt < this.pauseUntil) this.violations++;
    let status = 0;
    let errorCode: string | undefined;
    let headers: Record<string, string | string[] | undefined> | undefined;
    let text = '';
    let protocol: Protocol | undefined;
    // When it was written to its socket: later than sent while its connection is being opened or
    // the process is still compiling the path it takes (the first requests of a run), and the rate
    // search needs the time the limiter saw.
    const departure = {
      at: sentAt,
      departed(_seq: number, at: number) {
        this.at = at;
      },
    };
    try {
      const response = await this.send(this.pool, this.template, departure);
      status = response.status;
      headers = response.headers;
      text = response.text;
      protocol = response.protocol;
    } catch (error) {
      errorCode = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    } finally {
      this.inFlight--;
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
    const receivedAt = now();
    const written = departure.at;
    this.lastWrittenAt = Math.max(this.lastWrittenAt, written);
    const reply = this.reply(index, status, sentAt, written, receivedAt, headers, text);
    if (insidePause) return reply;
    this.o.sink?.record({
      operation: this.o.probe.operation,
      attempt: 1,
      keyLabel: this.o.keyLabel,
      scheduledAt: undefined,
      sentAt,
      receivedAt,
      status,
      kind: reply.kind,
      errorCode,
      protocol,
      headers,
      rateLimitView: reply.view,
      body: new ResponseBody(text, headers),
      pacingWaitMs: 0,
      backoffWaitMs: 0,
      ...(reply.retryAfterMs === undefined ? {} : { pauseUntil: receivedAt + reply.retryAfterMs }),
      retried: false,
    });
    return reply;
  }

  /** The answer read once, in whatever dialect it came, and the pause it imposes. */
  private reply(
    index: number,
    status: number,
    sentAt: number,
    written: number,
    receivedAt: number,
    headers: Record<string, string | string[] | undefined> | undefined,
    text: string,
  ): ProbeReply {
    const view = readRateLimit(headers ?? {}, receivedAt);
    const kind = classifyResponse(
      { status, headers, view, body: new ResponseBody(text, headers) },
      this.o.refusalStatuses,
    );
    const rateLimit = view.dialect === 'none' ? EMPTY_STATE : quotaState(view, receivedAt);
    if (status !== 0) {
      this.dialects.set(view.dialect, (this.dialects.get(view.dialect) ?? 0) + 1);
      if (view.dialect !== 'none' && view.resetSeconds !== undefined) this.resetDialects.add(view.dialect);
      const shot = { at: written, admitted: passedLimiter(kind), answeredAt: receivedAt };
      this.shots?.push(shot);
      if (this.history.length < HISTORY_MAX) this.history.push(shot);
      if (rateLimit.limit !== undefined) this.limitsTold.add(rateLimit.limit);
    }
    // Nothing admitted yet: no gap was probed, and a window is the safe wait.
    const gap = this.lastAdmittedAt > 0 ? sentAt - this.lastAdmittedAt : this.o.windowMs;
    if (passedLimiter(kind)) {
      this.admittedTotal++;
      this.lastAdmittedAt = Math.max(this.lastAdmittedAt, sentAt);
    }
    let retryAfterMs: number | undefined;
    let hasRetryAfter = false;
    let code: string | undefined;
    if (keepsAway(kind)) {
      this.refusedWith.set(status, (this.refusedWith.get(status) ?? 0) + 1);
      const parsed = parseRetryAfter(headers?.['retry-after']);
      hasRetryAfter = parsed !== undefined;
      retryAfterMs = parsed
        ? retryAfterDelayMs(parsed, receivedAt)
        : rateLimit.reset !== undefined
          ? Math.max(0, rateLimit.reset * 1000 - receivedAt)
          : this.quietBackoff === 'gap'
            ? Math.max(QUIET_BACKOFF_MIN_MS, QUIET_BACKOFF_FACTOR * gap)
            : this.o.windowMs;
      this.pauseUntil = Math.max(this.pauseUntil, receivedAt + retryAfterMs);
      code = errorBodyCode(text);
    }
    return {
      index,
      status,
      kind,
      sentAt,
      writtenAt: written,
      receivedAt,
      rateLimit,
      view,
      retryAfterMs,
      hasRetryAfter,
      code,
      admittedSoFar: this.admittedTotal,
    };
  }
}

function errorBodyCode(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { code?: unknown };
    return typeof body?.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}
