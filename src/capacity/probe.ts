import { Pool } from 'undici';
import type { Operation } from '../api/operations.ts';
import { type Plan, type RateWindow, shortestWindow } from '../api/plans.ts';
import { type RateLimitState, readRateLimitHeaders } from '../api/rate-limit-headers.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../api/retry-after.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { ResponseBody } from '../client/response-body.ts';
import { send } from '../client/transport.ts';
import type { AttemptSink } from '../record/attempt.ts';
import type { CapacityHeaderSample, CapacityReport } from '../result/capacity-types.ts';
import { inferLimiter } from './infer.ts';
import { judge } from './verdict.ts';

export interface CapacityProbeOptions {
  baseUrl: string;
  apiKey: string;
  /** The plan as the target counts it (time-scaled). */
  plan: Plan;
  /** The same plan unscaled: what it promises per minute and per day. */
  promised: Plan;
  timeScale: number;
  /** `listPets`: cheap and idempotent. */
  operation: Operation;
  sink: AttemptSink;
  /** Windows at the plan rate (default 2). */
  windows?: number;
  /** Requests in flight at most (the gate lowers it as the window runs out). */
  maxInFlight?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface Reply {
  index: number;
  status: number;
  sentAt: number;
  receivedAt: number;
  rateLimit: RateLimitState;
  /** ms to wait after a 429 (Retry-After, else X-RateLimit-Reset, else one window). */
  retryAfterMs: number | undefined;
  /** The 429 carried a usable Retry-After (not derived from X-RateLimit-Reset or guessed). */
  hasRetryAfter: boolean;
}

/** Probes never exceed a limit by more than this many requests (the seed bans repeated 429s). */
export const EXCESS_BOUND = 3;
const MAX_RECOVERY_PROBES = 8;
/** Share of a window its L requests are spread over: the rest absorbs timer and event-loop lag. */
const SPREAD = 0.9;

const admitted = (status: number) => status !== 0 && status !== 429 && status !== 403;

/**
 * One key, one plan: at the plan rate for N windows, then one window exhausted, then the quota's
 * return. Every request is a GET of one pet's page, recorded like any attempt; after a 429 nothing
 * leaves before its Retry-After has elapsed.
 */
export class CapacityProbe {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly window: RateWindow;
  private readonly windowMs: number;
  private pauseUntil = 0;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private violations = 0;
  private readonly cap: number;

  constructor(private readonly o: CapacityProbeOptions) {
    const url = new URL(o.baseUrl);
    this.pool = new Pool(url.origin, { connections: o.maxInFlight ?? 32, keepAliveTimeout: 30_000 });
    this.path = `${url.pathname.replace(/\/$/, '')}/pets?limit=1`;
    this.headers = { authorization: `Bearer ${o.apiKey}`, accept: 'application/json' };
    const w = shortestWindow(o.plan.windows);
    if (!w) throw new Error(`plan '${o.plan.name}' has no windows`);
    this.window = w;
    this.windowMs = w.seconds * 1000;
    this.cap = o.maxInFlight ?? 32;
  }

  async run(): Promise<CapacityReport> {
    const started = now();
    try {
      return await this.measure(started);
    } finally {
      await this.pool.close();
    }
  }

  private async measure(started: number): Promise<CapacityReport> {
    const L = this.window.limit;
    const W = this.windowMs;
    const guard = Math.max(10, W * 0.05);
    const windows = this.o.windows ?? 2;

    // Phase 1: L requests per window, evenly over 90% of it; a window's first request leaves W + guard
    // after the previous window's first answer, so that no request is counted in a window it was
    // not meant for, whatever the limiter's phase.
    const acceptedPerWindow: number[] = [];
    const resetValuesPerWindow: number[] = [];
    let rateSent = 0;
    let rateLimited = 0;
    let behind = 0;
    let anchor = now();
    for (let k = 0; k < windows && !this.o.signal?.aborted; k++) {
      let accepted = 0;
      let known: number | undefined;
      const resets = new Set<number>();
      const spacing = (W * SPREAD) / L;
      let firstAnsweredAt: number | undefined;
      const pending: Promise<void>[] = [];
      let refused = false;
      for (let j = 0; j < L && !this.o.signal?.aborted; j++) {
        await sleepUntil(anchor + j * spacing);
        await this.slot(() => known);
        // The target refused a request at the plan rate: the window falls short of its promise, and
        // sending the rest of it would only pile requests beyond a limit the target has shown.
        if (refused) break;
        const index = ++rateSent;
        pending.push(
          this.request(index).then((r) => {
            if (admitted(r.status)) accepted++;
            if (r.status === 429) {
              rateLimited++;
              refused = true;
            }
            if (r.rateLimit.remaining !== undefined)
              known = known === undefined ? r.rateLimit.remaining : Math.min(known, r.rateLimit.remaining);
            if (r.rateLimit.reset !== undefined && admitted(r.status)) resets.add(r.rateLimit.reset);
            // The server's window began when this first request arrived: before it was answered.
            firstAnsweredAt ??= r.receivedAt;
          }),
        );
      }
      await Promise.all(pending);
      if (now() - anchor > W + guard) behind++;
      acceptedPerWindow.push(accepted);
      resetValuesPerWindow.push(resets.size);
      anchor = Math.max((firstAnsweredAt ?? anchor) + W + guard, this.pauseUntil, now());
    }

    // Phase 2: a fresh window, as fast as the gate allows, until the first 429 or L + 3 requests.
    await sleepUntil(anchor);
    const samples: CapacityHeaderSample[] = [];
    let exhaustSent = 0;
    let exhaustAccepted = 0;
    let first429: Reply | undefined;
    let lastReply: Reply | undefined;
    let known: number | undefined;
    const exhaustStart = now();
    const pending: Promise<void>[] = [];
    while (exhaustSent < L + EXCESS_BOUND && !first429 && !this.o.signal?.aborted) {
      await this.slot(() => known);
      if (first429) break;
      const index = ++exhaustSent;
      pending.push(
        this.request(index).then((r) => {
          samples.push({
            request: r.index,
            status: r.status,
            limit: r.rateLimit.limit ?? null,
            remaining: r.rateLimit.remaining ?? null,
            reset: r.rateLimit.reset ?? null,
          });
          if (admitted(r.status)) exhaustAccepted++;
          if (r.status === 429 && (!first429 || r.index < first429.index)) first429 = r;
          if (!lastReply || r.index > lastReply.index) lastReply = r;
          if (r.rateLimit.remaining !== undefined)
            known = known === undefined ? r.rateLimit.remaining : Math.min(known, r.rateLimit.remaining);
        }),
      );
    }
    await Promise.all(pending);
    const exhaustMs = now() - exhaustStart;
    samples.sort((a, b) => a.request - b.request);
    const rejected = first429 as Reply | undefined;

    // Phase 3: the quota's return, never before Retry-After (or, without a 429, the announced reset).
    const announcedRetryAt =
      rejected?.retryAfterMs !== undefined && rejected.hasRetryAfter
        ? rejected.receivedAt + rejected.retryAfterMs
        : null;
    const resetHeader = (rejected ?? lastReply)?.rateLimit.reset;
    const announcedResetAt = resetHeader === undefined ? null : resetHeader * 1000;
    const step = Math.max(10, 50 / this.o.timeScale);
    let probeAt = Math.max(
      announcedRetryAt ?? announcedResetAt ?? exhaustStart + W + guard,
      this.pauseUntil,
      now(),
    );
    let probes = 0;
    let back: Reply | undefined;
    let index = exhaustSent;
    while (probes < MAX_RECOVERY_PROBES && !this.o.signal?.aborted) {
      await sleepUntil(probeAt + 1);
      probes++;
      const r = await this.request(++index);
      if (admitted(r.status)) {
        back = r;
        break;
      }
      probeAt = Math.max(now() + step, this.pauseUntil);
    }
    let remainingAfterTenth: number | null = null;
    if (back && !this.o.signal?.aborted) {
      await sleepUntil(now() + W / 10);
      const r = await this.request(++index);
      if (admitted(r.status)) remainingAfterTenth = r.rateLimit.remaining ?? null;
    }

    const quotaBackAt = back ? back.sentAt : null;
    const resetErrorMs =
      quotaBackAt !== null && announcedResetAt !== null ? Math.round(quotaBackAt - announcedResetAt) : null;
    const retryAfterAccuracyMs =
      quotaBackAt !== null && announcedRetryAt !== null
        ? Math.max(0, Math.round(quotaBackAt - announcedRetryAt))
        : null;
    const acceptedPerMinute = acceptedPerWindow.length ? Math.min(...acceptedPerWindow) : null;
    const minute = this.o.promised.windows.find((w) => w.seconds === 60);
    const day = this.o.promised.windows.find((w) => w.seconds === 86_400);

    const report: CapacityReport = {
      plan: this.o.plan.name,
      timeScale: this.o.timeScale,
      window: { name: this.window.name, limit: L, seconds: this.window.seconds },
      promisedPerMinute: minute?.limit ?? null,
      promisedPerDay: day?.limit ?? null,
      rate: {
        windows: acceptedPerWindow.length,
        sent: rateSent,
        acceptedPerWindow,
        rateLimited,
        acceptedPerMinute,
        resetValuesPerWindow,
      },
      exhaust: {
        sent: exhaustSent,
        accepted: exhaustAccepted,
        // Requests travel over several connections and reach the server out of send order: the
        // 429 came after every request the window admitted.
        first429At: rejected ? exhaustAccepted + 1 : null,
        expected429At: L + 1,
        headers: samples.length <= 8 ? samples : [...samples.slice(0, 3), ...samples.slice(-5)],
        retryAfterSeconds:
          rejected && announcedRetryAt !== null
            ? Math.round((announcedRetryAt - rejected.receivedAt) / 10) / 100
            : null,
        reset: rejected?.rateLimit.reset ?? null,
      },
      recovery: {
        probes,
        announcedRetryAt: announcedRetryAt === null ? null : Math.round(announcedRetryAt),
        announcedResetAt,
        quotaBackAt: quotaBackAt === null ? null : Math.round(quotaBackAt),
        resetErrorMs,
        resetAccuracyMs: resetErrorMs === null ? null : Math.abs(resetErrorMs),
        retryAfterAccuracyMs,
        remainingAtReturn: back?.rateLimit.remaining ?? null,
        remainingAfterTenth,
      },
      limiter: { type: 'unknown', evidence: [] },
      violations: this.violations,
      verdict: 'pass',
      reasons: [],
      durationMs: Math.round(now() - started),
    };
    report.limiter = inferLimiter(report);
    const notes: string[] = [];
    if (behind > 0) notes.push(`the client fell behind the plan rate in ${behind} window(s)`);
    if (exhaustMs > W && rejected === undefined)
      notes.push(
        `the client took ${Math.round(exhaustMs)} ms to send ${exhaustSent} requests, more than a window`,
      );
    const { verdict, reasons } = judge(report, step, notes);
    report.verdict = verdict;
    report.reasons = reasons;
    return report;
  }

  /** Waits for room: at most `cap` in flight, and no more than the window has left (one at a time near its end). */
  private async slot(known: () => number | undefined): Promise<void> {
    for (;;) {
      const left = known();
      const room = left === undefined ? 1 : Math.max(1, Math.min(this.cap, left));
      if (this.inFlight < room) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private async request(index: number): Promise<Reply> {
    // In flight from now, not from when it leaves: a request waiting out a pause holds its slot, so
    // that requests queued behind a 429 cannot all leave together when the pause ends.
    this.inFlight++;
    // The ban guard: after a 429 nothing leaves before its Retry-After.
    // Timers may fire a fraction of a millisecond early: wait until the clock says so.
    while (now() < this.pauseUntil) await sleepUntil(this.pauseUntil + 1);
    const sentAt = now();
    if (sentAt < this.pauseUntil) this.violations++;
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
    const rateLimit = headers
      ? readRateLimitHeaders(headers)
      : { limit: undefined, remaining: undefined, reset: undefined };
    let retryAfterMs: number | undefined;
    let hasRetryAfter = false;
    if (status === 429) {
      const parsed = parseRetryAfter(headers?.['retry-after']);
      hasRetryAfter = parsed !== undefined;
      retryAfterMs = parsed
        ? retryAfterDelayMs(parsed, receivedAt)
        : rateLimit.reset !== undefined
          ? Math.max(0, rateLimit.reset * 1000 - receivedAt)
          : this.windowMs;
      this.pauseUntil = Math.max(this.pauseUntil, receivedAt + retryAfterMs);
    }
    this.o.sink.record({
      operation: this.o.operation,
      attempt: 1,
      keyLabel: this.o.plan.name,
      scheduledAt: undefined,
      sentAt,
      receivedAt,
      status,
      errorCode,
      headers,
      rateLimit,
      body: new ResponseBody(text, headers),
      pacingWaitMs: 0,
      backoffWaitMs: 0,
      retried: false,
    });
    return { index, status, sentAt, receivedAt, rateLimit, retryAfterMs, hasRetryAfter };
  }
}
