import { Pool } from 'undici';
import type { Operation } from '../api/operations.ts';
import { type RateLimitState, readRateLimitHeaders } from '../api/rate-limit-headers.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { ResponseBody } from '../client/response-body.ts';
import { send } from '../client/transport.ts';
import type { AttemptSink } from '../record/attempt.ts';

/** One answer, as the capacity phases need it. */
export interface ProbeReply {
  index: number;
  status: number;
  sentAt: number;
  receivedAt: number;
  rateLimit: RateLimitState;
  /** ms to wait after a 429 or 403 (Retry-After, else X-RateLimit-Reset, else one window). */
  retryAfterMs: number | undefined;
  /** The refusal carried a usable Retry-After (not derived from X-RateLimit-Reset or guessed). */
  hasRetryAfter: boolean;
  /** The Error body's `code`, when a refusal had one. */
  code: string | undefined;
  /** The client's admittedTotal once this answer was counted. */
  admittedSoFar: number;
}

export interface ProbeClientOptions {
  baseUrl: string;
  apiKey: string;
  /** The window a 429 without Retry-After or Reset is waited out for. */
  windowMs: number;
  /** `listPets`: cheap and idempotent. */
  operation: Operation;
  /** Where attempts are recorded (the ban probe records none: it breaks the client rules on purpose). */
  sink?: AttemptSink;
  keyLabel: string;
  maxInFlight?: number;
  timeoutMs?: number;
}

/** Admitted: counted against the quota. A 403 is how some services answer a banned key. */
export const admitted = (status: number) => status !== 0 && status !== 429 && status !== 403;

/**
 * One key's requests for the capacity phases: a GET of one pet's page each, over its own pool. It
 * keeps the ban guard (after a refusal nothing leaves before its Retry-After) and the in-flight gate
 * that lowers concurrency as a window runs out.
 */
export class ProbeClient {
  pauseUntil = 0;
  /** Requests that left inside a Retry-After although they were not meant to (must stay 0). */
  violations = 0;
  /** Requests the target admitted, over the client's life: what they took from the daily quota. */
  admittedTotal = 0;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly cap: number;

  constructor(private readonly o: ProbeClientOptions) {
    const url = new URL(o.baseUrl);
    this.cap = o.maxInFlight ?? 32;
    this.pool = new Pool(url.origin, { connections: this.cap, keepAliveTimeout: 30_000 });
    this.path = `${url.pathname.replace(/\/$/, '')}/pets?limit=1`;
    this.headers = { authorization: `Bearer ${o.apiKey}`, accept: 'application/json' };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Waits for room: at most `cap` in flight, and no more than the window has left (one at a time near its end). */
  async slot(known: () => number | undefined): Promise<void> {
    for (;;) {
      const left = known();
      const room = left === undefined ? 1 : Math.max(1, Math.min(this.cap, left));
      if (this.inFlight < room) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /**
   * `insidePause`: leave at once even inside a Retry-After. Only the ban probe asks for it, on the
   * key the user named for being banned.
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
    try {
      const response = await send(this.pool, {
        path: this.path,
        method: 'GET',
        headers: this.headers,
        headersTimeout: this.o.timeoutMs ?? 10_000,
        bodyTimeout: this.o.timeoutMs ?? 10_000,
      });
      status = response.status;
      headers = response.headers;
      text = response.text;
    } catch (error) {
      errorCode = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    } finally {
      this.inFlight--;
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
    const receivedAt = now();
    if (admitted(status)) this.admittedTotal++;
    const rateLimit = headers
      ? readRateLimitHeaders(headers)
      : { limit: undefined, remaining: undefined, reset: undefined };
    let retryAfterMs: number | undefined;
    let hasRetryAfter = false;
    let code: string | undefined;
    if (status === 429 || status === 403) {
      const parsed = parseRetryAfter(headers?.['retry-after']);
      hasRetryAfter = parsed !== undefined;
      retryAfterMs = parsed
        ? retryAfterDelayMs(parsed, receivedAt)
        : rateLimit.reset !== undefined
          ? Math.max(0, rateLimit.reset * 1000 - receivedAt)
          : this.o.windowMs;
      this.pauseUntil = Math.max(this.pauseUntil, receivedAt + retryAfterMs);
      code = errorBodyCode(text);
    }
    this.o.sink?.record({
      operation: this.o.operation,
      attempt: 1,
      keyLabel: this.o.keyLabel,
      scheduledAt: undefined,
      sentAt,
      receivedAt,
      status,
      errorCode,
      headers,
      body: new ResponseBody(text, headers),
      pacingWaitMs: 0,
      backoffWaitMs: 0,
      retried: false,
    });
    return {
      index,
      status,
      sentAt,
      receivedAt,
      rateLimit,
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
