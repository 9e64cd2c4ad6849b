import type { Operation } from '../api/operations.ts';
import { type Plan, type RateWindow, shortestWindow } from '../api/plans.ts';
import { now, sleepUntil } from '../client/clock.ts';
import type { AttemptSink } from '../record/attempt.ts';
import type { CapacityReport } from '../result/capacity-types.ts';
import { dailyWindow, judgeDaily, walkDaily } from './daily.ts';
import { EXCESS_BOUND, exhaustWindow } from './exhaust.ts';
import { inferLimiter } from './infer.ts';
import { nextAnchor, type PacedWindow, pacedWindow } from './paced-window.ts';
import { admitted, ProbeClient, type ProbeReply } from './probe-client.ts';
import { HEADER_GRANULARITY_MS, judge } from './verdict.ts';

export { EXCESS_BOUND };

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
  /** Then walk the daily quota at the plan rate until its 429. */
  daily?: boolean;
  /** Requests in flight at most (the gate lowers it as the window runs out). */
  maxInFlight?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const MAX_RECOVERY_PROBES = 8;

/**
 * One key, one plan: at the plan rate for N windows, then one window exhausted, then the quota's
 * return (and with `daily`, the rest of the day's quota at the plan rate). Every request is a GET
 * of one pet's page, recorded like any attempt; after a 429 nothing leaves before its Retry-After.
 */
export class CapacityProbe {
  private readonly client: ProbeClient;
  private readonly window: RateWindow;
  private readonly windowMs: number;

  constructor(private readonly o: CapacityProbeOptions) {
    const w = shortestWindow(o.plan.windows);
    if (!w) throw new Error(`plan '${o.plan.name}' has no windows`);
    this.window = w;
    this.windowMs = w.seconds * 1000;
    this.client = new ProbeClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      windowMs: this.windowMs,
      operation: o.operation,
      sink: o.sink,
      keyLabel: o.plan.name,
      maxInFlight: o.maxInFlight,
      timeoutMs: o.timeoutMs,
    });
  }

  async run(): Promise<CapacityReport> {
    const started = now();
    try {
      return await this.measure(started);
    } finally {
      await this.client.close();
    }
  }

  private async measure(started: number): Promise<CapacityReport> {
    const client = this.client;
    const signal = this.o.signal;
    const L = this.window.limit;
    const W = this.windowMs;
    const guard = Math.max(10, W * 0.05);
    const windows = this.o.windows ?? 2;
    // A refusal whose wait outlives the window is not the window's (a spent day, a ban): waiting it
    // out could take hours, so the probe stops and says so.
    let stalled: string | undefined;
    const checkStall = () => {
      const wait = client.pauseUntil - now();
      if (stalled === undefined && wait > W + HEADER_GRANULARITY_MS + guard)
        stalled = `a 429 announced a wait of ${Math.round(wait / 100) / 10} s, longer than the ${this.window.seconds} s ${this.window.name} window: a longer quota (the day's?) is spent, and the probe stopped rather than wait`;
      return stalled !== undefined;
    };

    // Phase 1: L requests per window, evenly over 90% of it; a window's first request leaves W + guard
    // after the previous window's first answer, so that no request is counted in a window it was
    // not meant for, whatever the limiter's phase.
    const acceptedPerWindow: number[] = [];
    const resetValuesPerWindow: number[] = [];
    let rateSent = 0;
    let rateLimited = 0;
    let behind = 0;
    let anchor = now();
    let lastWindow: PacedWindow | undefined;
    for (let k = 0; k < windows && !signal?.aborted; k++) {
      const w = await pacedWindow(client, {
        anchor,
        count: L,
        windowMs: W,
        firstIndex: rateSent + 1,
        signal,
      });
      lastWindow = w;
      rateSent += w.sent;
      rateLimited += w.rateLimited;
      if (now() - anchor > W + guard) behind++;
      acceptedPerWindow.push(w.accepted);
      resetValuesPerWindow.push(w.resets.size);
      if (checkStall()) break;
      anchor = nextAnchor(client, w, anchor, W);
    }

    // Phase 2: a fresh window, as fast as the gate allows, until the first 429 or L + 3 requests.
    // A server whose windows are aligned to the clock may still count the last paced window at the
    // anchor: its Reset says when that window ends. Exhausting before then would meet the 429 early.
    // (A Reset further off than a window describes a longer quota, and is not waited for.)
    const lastResets = [...(lastWindow?.resets ?? [])];
    const windowEnd = lastResets.length > 0 ? Math.max(...lastResets) * 1000 : 0;
    if (windowEnd > anchor && windowEnd <= now() + W + HEADER_GRANULARITY_MS) anchor = windowEnd + 1;
    if (!stalled) await sleepUntil(anchor, signal);
    const exhaustStart = now();
    const exhausted =
      signal?.aborted || stalled
        ? { sent: 0, accepted: 0, refusal: undefined, last: undefined, samples: [] }
        : await exhaustWindow(client, L, signal);
    const exhaustMs = now() - exhaustStart;
    const rejected = exhausted.refusal;

    // Phase 3: the quota's return, never before Retry-After (or, without a 429, the announced reset).
    const announcedRetryAt =
      rejected?.retryAfterMs !== undefined && rejected.hasRetryAfter
        ? rejected.receivedAt + rejected.retryAfterMs
        : null;
    const resetHeader = (rejected ?? exhausted.last)?.rateLimit.reset;
    const announcedResetAt = resetHeader === undefined ? null : resetHeader * 1000;
    const step = Math.max(10, 50 / this.o.timeScale);
    let probeAt = Math.max(
      announcedRetryAt ?? announcedResetAt ?? exhaustStart + W + guard,
      client.pauseUntil,
      now(),
    );
    let probes = 0;
    let back: ProbeReply | undefined;
    let index = exhausted.sent;
    while (probes < MAX_RECOVERY_PROBES && !signal?.aborted && exhausted.sent > 0 && !checkStall()) {
      await sleepUntil(probeAt + 1, signal);
      if (signal?.aborted) break;
      probes++;
      const r = await client.request(++index);
      if (admitted(r.status)) {
        back = r;
        break;
      }
      probeAt = Math.max(now() + step, client.pauseUntil);
    }
    let remainingAfterTenth: number | null = null;
    let recoveryWindowEnd = back?.rateLimit.reset === undefined ? 0 : back.rateLimit.reset * 1000;
    if (back && !signal?.aborted) {
      await sleepUntil(now() + W / 10, signal);
      const r = await client.request(++index);
      if (admitted(r.status)) remainingAfterTenth = r.rateLimit.remaining ?? null;
      if (admitted(r.status) && r.rateLimit.reset !== undefined) recoveryWindowEnd = r.rateLimit.reset * 1000;
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
        sent: exhausted.sent,
        accepted: exhausted.accepted,
        // Requests travel over several connections and reach the server out of send order: the
        // 429 came after every request the window admitted.
        first429At: rejected ? exhausted.accepted + 1 : null,
        expected429At: L + 1,
        headers:
          exhausted.samples.length <= 8
            ? exhausted.samples
            : [...exhausted.samples.slice(0, 3), ...exhausted.samples.slice(-5)],
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
      violations: 0,
      verdict: 'pass',
      reasons: [],
      durationMs: 0,
    };
    report.limiter = inferLimiter(report);
    const notes: string[] = [];
    if (behind > 0) notes.push(`the client fell behind the plan rate in ${behind} window(s)`);
    if (exhaustMs > W && rejected === undefined)
      notes.push(
        `the client took ${Math.round(exhaustMs)} ms to send ${exhausted.sent} requests, more than a window`,
      );
    const { verdict, reasons: judged } = judge(report, step, notes);
    // The stall explains what follows from it (no quota back, no window measured): it comes first.
    const reasons = stalled ? [stalled, ...judged] : judged;

    // Phase 4 (--daily): the rest of the day at the plan rate, until the day's 429.
    const dayWindow = dailyWindow(this.o.plan);
    if (this.o.daily && dayWindow && back && !signal?.aborted) {
      report.daily = await walkDaily(client, {
        minute: this.window,
        day: dayWindow,
        // After the window the return's probes counted in (as before exhausting: a clock-aligned window
        // would count them with the walk's first window), unless that Reset describes a longer quota.
        anchor: Math.max(
          now() + W / 10,
          client.pauseUntil,
          recoveryWindowEnd <= now() + W + HEADER_GRANULARITY_MS ? recoveryWindowEnd + 1 : 0,
        ),
        firstIndex: index + 1,
        signal,
      });
      reasons.push(...judgeDaily(report.daily));
    } else if (this.o.daily) {
      reasons.push(
        dayWindow
          ? 'the daily quota was not walked: the minute quota never came back'
          : `plan '${this.o.plan.name}' has no window longer than its ${this.window.name}: no daily quota to walk`,
      );
    }
    report.violations = client.violations;
    if (client.violations > 0)
      reasons.push(`${client.violations} request(s) sent inside a Retry-After (a bug of ours)`);
    report.verdict = reasons.length === 0 ? verdict : 'fail';
    report.reasons = reasons;
    report.durationMs = Math.round(now() - started);
    return report;
  }
}
