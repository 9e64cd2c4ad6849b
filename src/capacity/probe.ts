import type { Operation } from '../api/operations.ts';
import { type Plan, type RateWindow, shortestWindow } from '../api/plans.ts';
import type { Dialect } from '../api/rate-limit-dialect.ts';
import type { Transport } from '../client/client.ts';
import { now, sleepUntil } from '../client/clock.ts';
import type { AttemptSink } from '../record/attempt.ts';
import type { CapacityReport } from '../result/capacity-types.ts';
import { type Ramp, rampFromRest } from './concurrency.ts';
import { dailyWindow, judgeDaily, walkDaily } from './daily.ts';
import { pacedInfeasible, remainingEstimateMs, windowFirstEstimateMs } from './estimate.ts';
import { EXCESS_BOUND, type Exhausted, exhaustWindow, noBurst } from './exhaust.ts';
import { type Family, inferLimiter, RESET_SEMANTICS } from './infer.ts';
import { firstLook, type Look } from './look.ts';
import { probeModelReturn, searchRateAfter } from './model-return.ts';
import { distinctResets, nextAnchor, type PacedWindow, pacedWindow } from './paced-window.ts';
import { admitted, ProbeClient, type ProbeReply } from './probe-client.ts';
import { rateSearchBoundMs, type SearchState, searchSummary } from './rate-search.ts';
import { announced, probeRecovery, type Recovery } from './recovery.ts';
import { SlowDownWatch, withSlowDown } from './slow-down.ts';
import { HEADER_GRANULARITY_MS, judge } from './verdict.ts';
import { familyWithRefusals, refusalsCountEvidence, refusedWithinWindow } from './window-refusals.ts';

export { EXCESS_BOUND };

/** A release timed by a timer on each side may be off by this much; the interval, by it over the releases. */
const RELEASE_JITTER_MS = 4;
const round2 = (n: number) => Math.round(n * 100) / 100;
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

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
  /** Told what the probe is about to do when it decides a longer phase (the rate search). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  transport?: Transport;
}

/** The plan-rate windows, as the report tells them. */
interface PacedPhase {
  sent: number;
  rateLimited: number;
  acceptedPerWindow: number[];
  resetValuesPerWindow: number[];
  /** Windows in which the client fell behind the plan rate. */
  behind: number;
  last: PacedWindow | undefined;
  /** When a next paced window could start. */
  next: number;
}

/** Everything measured, in whichever order it was. */
interface Measured {
  look: Look;
  paced: PacedPhase;
  exhausted: Exhausted;
  exhaustMs: number;
  recovery: Recovery;
  family: Family;
  atOnceFrom: 'remaining' | 'counted';
  search: SearchState | undefined;
  returnRangeMs: { low: number; high: number } | null;
  /** Where the daily walk may begin. */
  dailyAnchor: number;
  /** The answers' times of a burst sent one request at a time (model-first only). */
  slowDown?: SlowDownWatch;
}

const NO_EXHAUST: Exhausted = noBurst();

/**
 * One key, one plan: the plan rate for N windows, one window (or a limiter at rest) exhausted, the
 * quota's return, and, against a limiter that refills continuously or says nothing, its sustained
 * rate (and with `daily`, the rest of the day's quota at the plan rate). Every request is a GET of
 * one pet's page, recorded like any attempt; after a 429 nothing leaves before its Retry-After.
 */
export class CapacityProbe {
  private readonly client: ProbeClient;
  private readonly window: RateWindow;
  private readonly windowMs: number;
  private readonly guardMs: number;
  private stalledBy: string | undefined;
  private started = 0;
  private ramp: Ramp | undefined;
  /** The rate was read from a queue's release (model-first), not searched. */
  private queueMeasured = false;
  /** Why the paced windows were not sent (the plan rate cannot be kept at the latency seen). */
  private infeasible: string | undefined;

  constructor(private readonly o: CapacityProbeOptions) {
    const w = shortestWindow(o.plan.windows);
    if (!w) throw new Error(`plan '${o.plan.name}' has no windows`);
    this.window = w;
    this.windowMs = w.seconds * 1000;
    this.guardMs = Math.max(10, this.windowMs * 0.05);
    this.client = new ProbeClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      windowMs: this.windowMs,
      operation: o.operation,
      sink: o.sink,
      keyLabel: o.plan.name,
      maxInFlight: o.maxInFlight,
      timeoutMs: o.timeoutMs,
      transport: o.transport,
    });
  }

  async run(): Promise<CapacityReport> {
    const started = now();
    this.started = started;
    try {
      const look = await firstLook(this.client, { windowMs: this.windowMs, signal: this.o.signal });
      if (look.order === 'window-first') {
        const latencyMs = look.first.receivedAt - look.first.sentAt;
        const about = windowFirstEstimateMs({
          windowMs: this.windowMs,
          limit: this.window.limit,
          windows: this.o.windows ?? 2,
          latencyMs,
        });
        this.o.log?.(
          `the first answer took ${Math.round(latencyMs)} ms and announced a window: about ${seconds(now() - started + about)} in all`,
        );
      }
      const m = look.order === 'window-first' ? await this.windowFirst(look) : await this.modelFirst(look);
      const report = this.report(m);
      await this.walkDay(report, m);
      report.violations = this.client.violations;
      if (this.client.violations > 0)
        report.reasons.push(`${this.client.violations} request(s) sent inside a Retry-After (a bug of ours)`);
      if (report.reasons.length > 0) report.verdict = 'fail';
      report.durationMs = Math.round(now() - started);
      return report;
    } finally {
      await this.client.close();
    }
  }

  /**
   * A refusal whose wait outlives the window is not the window's (a spent day, a ban): waiting it
   * out could take hours, so the probe stops and says so.
   */
  private stalled = (): boolean => {
    const wait = this.client.pauseUntil - now();
    if (this.stalledBy === undefined && wait > this.windowMs + HEADER_GRANULARITY_MS + this.guardMs)
      this.stalledBy = `a 429 announced a wait of ${Math.round(wait / 100) / 10} s, longer than the ${this.window.seconds} s ${this.window.name} window: a longer quota (the day's?) is spent, and the probe stopped rather than wait`;
    return this.stalledBy !== undefined;
  };

  /** L requests per window for N windows; a window's first request leaves a window and a guard after the previous one's first answer. */
  private async pacedPhase(
    anchor: number,
    pace: 'spread' | 'spaced',
    firstIndex: number,
    first?: ProbeReply,
  ): Promise<PacedPhase> {
    const out: PacedPhase = {
      sent: 0,
      rateLimited: 0,
      acceptedPerWindow: [],
      resetValuesPerWindow: [],
      behind: 0,
      last: undefined,
      next: anchor,
    };
    const signal = this.o.signal;
    if (this.infeasible) return out;
    for (let k = 0; k < (this.o.windows ?? 2) && !signal?.aborted && !this.stalled(); k++) {
      if (k > 0 || !first) await sleepUntil(out.next, signal);
      const w = await pacedWindow(this.client, {
        anchor: out.next,
        count: this.window.limit,
        windowMs: this.windowMs,
        firstIndex: firstIndex + out.sent,
        pace,
        first: k === 0 ? first : undefined,
        signal,
      });
      out.last = w;
      out.sent += w.sent;
      out.rateLimited += w.rateLimited;
      if (now() - out.next > this.windowMs * (pace === 'spaced' ? 1.1 : 1) + this.guardMs) out.behind++;
      out.acceptedPerWindow.push(w.accepted);
      out.resetValuesPerWindow.push(distinctResets(w.resets, w.maxRttMs));
      if (this.stalled()) break;
      out.next = nextAnchor(this.client, w, out.next, this.windowMs);
    }
    return out;
  }

  /** The reset of `at`, when it announces the window's end within a window from now (not a longer quota's). */
  private windowEnd(at: number | undefined): number {
    return at !== undefined && at <= now() + this.windowMs + HEADER_GRANULARITY_MS ? at : 0;
  }

  /** A window: the plan rate first, then one fresh window exhausted, then its return. */
  private async windowFirst(look: Look): Promise<Measured> {
    const client = this.client;
    const signal = this.o.signal;
    client.shots = undefined;
    const paced = await this.pacedPhase(look.first.sentAt, 'spread', 1, look.first);
    // A server whose windows are aligned to the clock may still count the last paced window at the
    // anchor: its reset says when that window ends. Exhausting before then would meet the 429 early.
    const lastReset = paced.last && paced.last.resets.length > 0 ? Math.max(...paced.last.resets) : undefined;
    const end = this.windowEnd(lastReset);
    const anchor = end > paced.next ? end + 1 : paced.next;
    if (!this.stalled()) await sleepUntil(anchor, signal);
    client.shots = [];
    const exhaustStart = now();
    const exhausted = signal?.aborted || this.stalled() ? NO_EXHAUST : await this.exhaustFresh();
    const exhaustMs = now() - exhaustStart;
    const recovery = await probeRecovery(client, exhausted, {
      windowMs: this.windowMs,
      stepMs: this.stepMs(),
      stalled: this.stalled,
      signal,
    });
    const limit = recovery.back?.rateLimit.limit ?? exhausted.accepted;
    recovery.refusedBefore = refusedWithinWindow(client.shots, recovery.back, this.windowMs);
    const family = familyWithRefusals(recovery.atOnce, limit, recovery.refusedBefore);
    const search =
      family === 'spacing' && !signal?.aborted
        ? await searchRateAfter(client, exhausted, recovery.nextIndex, this.modelOptions())
        : undefined;
    client.shots = undefined;
    const wholeAgain = this.windowEnd(recovery.wholeAgainAt);
    // After the window the return's probes counted in, as before exhausting.
    const dailyAnchor = Math.max(
      now() + this.windowMs / 10,
      client.pauseUntil,
      wholeAgain ? wholeAgain + 1 : 0,
    );
    return {
      look,
      paced,
      exhausted,
      exhaustMs,
      recovery,
      family,
      atOnceFrom: 'remaining',
      search,
      returnRangeMs: null,
      dailyAnchor,
    };
  }

  /**
   * A fresh window spent, begun at growing concurrency as from rest: Remaining bounds each burst, so
   * a refusal while the window still had room was for the requests in flight.
   */
  private async exhaustFresh(): Promise<Exhausted> {
    const first = await this.client.request(1);
    // A refusal for the number in flight that tells no wait holds the key for a moment, not a window.
    this.client.quietBackoff = 'gap';
    const ramp = await rampFromRest(this.client, {
      limit: this.window.limit,
      windowMs: this.windowMs,
      first,
      signal: this.o.signal,
    });
    this.client.quietBackoff = 'window';
    this.ramp = ramp;
    return exhaustWindow(this.client, this.window.limit, this.o.signal, undefined, { prior: ramp.exhausted });
  }

  /**
   * Anything else: the burst from rest (begun at growing concurrency, which tells a concurrency
   * limit or a queue), its return and the rate first; then the plan rate, at a pace the limiter admits.
   */
  private async modelFirst(look: Look): Promise<Measured> {
    const client = this.client;
    const signal = this.o.signal;
    // While the limiter is measured, a refusal without an announced wait holds the key for 1.5 times
    // the gap it probed; at the plan rate a refusal means the plan is not kept, and a window is waited.
    client.quietBackoff = 'gap';
    const exhaustStart = now();
    // A limiter that delays rather than refuses would hold each request longer than the last: the
    // burst stops once that growth is measured, or once one answer is held too long.
    const slowDown = new SlowDownWatch(Math.max(1000, this.windowMs / 2));
    const ramp = await rampFromRest(client, {
      limit: this.window.limit,
      windowMs: this.windowMs,
      first: look.first,
      signal,
      observe: slowDown.observe,
    });
    this.ramp = ramp;
    if (ramp.queue && ramp.releaseIntervalMs) return this.queueFirst(look, ramp, now() - exhaustStart);
    this.announce(ramp, ramp.exhausted.refusal ? 0 : this.window.limit + EXCESS_BOUND - ramp.exhausted.sent);
    const exhausted = ramp.halted
      ? ramp.exhausted
      : await exhaustWindow(client, this.window.limit, signal, undefined, {
          prior: ramp.exhausted,
          halt: slowDown.observe,
        });
    const exhaustMs = now() - exhaustStart;
    const model = await probeModelReturn(client, exhausted, this.modelOptions());
    client.quietBackoff = 'window';
    client.shots = undefined;
    const anchor = this.pacedAnchorAfterModel(model.family, model.recovery, model.returnRangeMs);
    const pace = model.family === 'spacing' ? 'spaced' : 'spread';
    const paced = await this.pacedPhase(anchor, pace, model.recovery.nextIndex);
    return {
      look,
      paced,
      exhausted,
      exhaustMs,
      ...model,
      dailyAnchor: Math.max(paced.next, now()),
      slowDown,
    };
  }

  /**
   * A limiter that queues: its burst and rate were read from the held answers' release, so the
   * interval search (which would read a held answer as an admission) does not run. The quota is
   * back an interval after the last release; the plan rate then goes at the plan's spacing.
   */
  private async queueFirst(look: Look, ramp: Ramp, exhaustMs: number): Promise<Measured> {
    const client = this.client;
    const interval = ramp.releaseIntervalMs as number;
    this.queueMeasured = true;
    this.announce(ramp, 0, interval);
    await sleepUntil(Math.max(ramp.lastReleaseAt + interval, client.pauseUntil + 1), this.o.signal);
    const r = await client.request(ramp.nextIndex++);
    const back = admitted(r.status) ? r : undefined;
    client.quietBackoff = 'window';
    client.shots = undefined;
    const recovery: Recovery = {
      ...announced(ramp.exhausted),
      probes: 1,
      back,
      atOnce: back ? 1 : null,
      remainingAfterTenth: null,
      wholeAgainAt: 0,
      nextIndex: ramp.nextIndex,
    };
    const paced = await this.pacedPhase(Math.max(now(), client.pauseUntil), 'spaced', recovery.nextIndex);
    return {
      look,
      paced,
      exhausted: ramp.exhausted,
      exhaustMs,
      recovery,
      family: 'spacing',
      atOnceFrom: 'counted',
      search: undefined,
      returnRangeMs: null,
      dailyAnchor: Math.max(paced.next, now()),
    };
  }

  /** The time announced again, now that the latency and the order are known. */
  private announce(ramp: Ramp, exhaustLeft: number, queueIntervalMs?: number): void {
    const refused = ramp.exhausted.refusal !== undefined;
    const spaced = refused || queueIntervalMs !== undefined;
    // Spaced requests go one at a time, whatever the target allows in flight.
    const inFlight = spaced ? 1 : (ramp.maxInFlight ?? 1);
    this.infeasible = pacedInfeasible({
      windowMs: this.windowMs,
      limit: this.window.limit,
      latencyMs: ramp.latencyMs,
      inFlight,
      windowName: this.window.name,
    });
    const base = {
      windowMs: this.windowMs,
      limit: this.window.limit,
      windows: this.infeasible ? 0 : (this.o.windows ?? 2),
      latencyMs: ramp.latencyMs,
      inFlight: ramp.maxInFlight ?? 1,
      exhaustLeft,
    };
    const elapsed = now() - this.started;
    const about =
      queueIntervalMs !== undefined
        ? remainingEstimateMs({ ...base, pace: 'spaced', beforePacedMs: queueIntervalMs + ramp.latencyMs })
        : remainingEstimateMs({ ...base, pace: refused ? 'spaced' : 'spread', beforePacedMs: 0 });
    const search =
      refused && queueIntervalMs === undefined ? rateSearchBoundMs(this.windowMs, this.window.limit) : 0;
    const limit =
      ramp.maxInFlight !== null
        ? `, at most ${ramp.maxInFlight} in flight`
        : queueIntervalMs !== undefined
          ? `, a queue of ${ramp.queue}`
          : '';
    this.o.log?.(
      `the first answers took ${Math.round(ramp.latencyMs)} ms${limit}: about ${seconds(elapsed + about)} in all${search ? `, at most ${seconds(elapsed + about + search)} with the search for the rate` : ''}`,
    );
  }

  /**
   * The plan rate starts on a whole quota: after the announced reset (or, told nothing, a window
   * after the quota's return) for a window; at once for a limiter that refills continuously, whose
   * pacing keeps the spacing from the last request anyway.
   */
  private pacedAnchorAfterModel(
    family: Family,
    recovery: Recovery,
    range: { low: number; high: number } | null,
  ): number {
    const earliest = Math.max(now(), this.client.pauseUntil);
    if (family !== 'window') return earliest;
    const end = this.windowEnd(recovery.wholeAgainAt);
    if (end > 0) return Math.max(earliest, end + 1);
    const back = recovery.back?.sentAt ?? now();
    const windowMs =
      range && this.windowMs >= range.low && this.windowMs <= range.high * 1.01
        ? this.windowMs
        : (range?.high ?? this.windowMs);
    return Math.max(earliest, back + windowMs + this.guardMs);
  }

  private stepMs(): number {
    return Math.max(10, 50 / this.o.timeScale);
  }

  private modelOptions() {
    return {
      windowMs: this.windowMs,
      planIntervalMs: this.windowMs / this.window.limit,
      stalled: this.stalled,
      log: this.o.log,
      signal: this.o.signal,
    };
  }

  private report(m: Measured): CapacityReport {
    const L = this.window.limit;
    const rejected = m.exhausted.refusal;
    const minute = this.o.promised.windows.find((w) => w.seconds === 60);
    const day = this.o.promised.windows.find((w) => w.seconds === 86_400);
    const report: CapacityReport = {
      plan: this.o.plan.name,
      timeScale: this.o.timeScale,
      window: { name: this.window.name, limit: L, seconds: this.window.seconds },
      promisedPerMinute: minute?.limit ?? null,
      promisedPerDay: day?.limit ?? null,
      rate: {
        windows: m.paced.acceptedPerWindow.length,
        sent: m.paced.sent,
        acceptedPerWindow: m.paced.acceptedPerWindow,
        rateLimited: m.paced.rateLimited,
        acceptedPerMinute: m.paced.acceptedPerWindow.length ? Math.min(...m.paced.acceptedPerWindow) : null,
        resetValuesPerWindow: m.paced.resetValuesPerWindow,
      },
      exhaust: {
        sent: m.exhausted.sent,
        accepted: m.exhausted.accepted,
        // Requests travel over several connections and reach the server out of send order: the
        // 429 came after every request the window admitted.
        first429At: rejected ? m.exhausted.accepted + 1 : null,
        expected429At: L + 1,
        headers:
          m.exhausted.samples.length <= 8
            ? m.exhausted.samples
            : [...m.exhausted.samples.slice(0, 3), ...m.exhausted.samples.slice(-5)],
        retryAfterSeconds:
          rejected && m.recovery.announcedRetryAt !== null
            ? Math.round((m.recovery.announcedRetryAt - rejected.receivedAt) / 10) / 100
            : null,
        reset:
          rejected?.rateLimit.reset === undefined ? null : Math.round(rejected.rateLimit.reset * 1000) / 1000,
      },
      recovery: this.recoveryFigures(m),
      limiter: this.limiter(m),
      violations: 0,
      verdict: 'pass',
      reasons: [],
      durationMs: 0,
    };
    report.limiter.evidence.unshift(...m.look.evidence);
    const { verdict, reasons } = judge(report, this.stepMs(), this.notes(m));
    // The stall explains what follows from it (no quota back, no window measured): it comes first.
    report.reasons = this.stalledBy ? [this.stalledBy, ...reasons] : reasons;
    report.verdict = verdict;
    return report;
  }

  private recoveryFigures(m: Measured): CapacityReport['recovery'] {
    const r = m.recovery;
    const quotaBackAt = r.back ? r.back.sentAt : null;
    // A token bucket's or a GCRA's reset announces a full bucket, not the next request: not its return.
    const resetErrorMs =
      quotaBackAt !== null && r.announcedResetAt !== null && m.family !== 'spacing'
        ? Math.round(quotaBackAt - r.announcedResetAt)
        : null;
    return {
      probes: r.probes,
      announcedRetryAt: r.announcedRetryAt === null ? null : Math.round(r.announcedRetryAt),
      announcedResetAt: r.announcedResetAt === null ? null : Math.round(r.announcedResetAt),
      quotaBackAt: quotaBackAt === null ? null : Math.round(quotaBackAt),
      resetErrorMs,
      resetAccuracyMs: resetErrorMs === null ? null : Math.abs(resetErrorMs),
      retryAfterAccuracyMs:
        quotaBackAt !== null && r.announcedRetryAt !== null
          ? Math.max(0, Math.round(quotaBackAt - r.announcedRetryAt))
          : null,
      remainingAtReturn: r.back?.rateLimit.remaining ?? null,
      remainingAfterTenth: r.remainingAfterTenth,
    };
  }

  private limiter(m: Measured): CapacityReport['limiter'] {
    const ramp = this.ramp;
    const queued =
      this.queueMeasured && ramp?.queue && ramp.releaseIntervalMs
        ? { queue: ramp.queue, intervalMs: ramp.releaseIntervalMs }
        : undefined;
    const report = this.inferred(m, queued);
    if (!ramp) return report;
    report.evidence.push(...ramp.evidence);
    report.maxInFlight = ramp.maxInFlight;
    report.queue = ramp.queue;
    // Refusals for too many in flight, and no rate's: the concurrency limit is the limiter.
    if (report.type === 'unknown' && ramp.maxInFlight !== null) report.type = 'concurrency';
    return report;
  }

  /** The rate model; a queue's rate is its release interval, told to within the timers' jitter. */
  private inferred(m: Measured, queued: { queue: number; intervalMs: number } | undefined) {
    const headerDialect = this.headerDialect();
    const answers = [m.look.first, m.exhausted.last, m.recovery.back];
    const jitter = queued ? RELEASE_JITTER_MS / Math.max(1, m.exhausted.accepted - 1) : 0;
    const released = queued && {
      probes: m.exhausted.sent,
      refused: m.exhausted.sent - m.exhausted.accepted,
      intervalMs: { low: round2(queued.intervalMs - jitter), high: round2(queued.intervalMs + jitter) },
      durationMs: Math.round((this.ramp?.lastReleaseAt ?? 0) - (m.exhausted.startedAt ?? 0)),
    };
    const limiter = inferLimiter({
      family: m.family,
      plan: { limit: this.window.limit, seconds: this.window.seconds },
      burstAdmitted: m.exhausted.refusal ? m.exhausted.accepted - (queued?.queue ?? 0) : null,
      burstStartedAt: m.exhausted.startedAt,
      quotaBackAt: m.recovery.back?.sentAt ?? null,
      atOnce: m.recovery.atOnce,
      atOnceFrom: m.atOnceFrom,
      remainingAfterTenth: m.recovery.remainingAfterTenth,
      headerLimit: answers.find((a) => a?.rateLimit.limit !== undefined)?.rateLimit.limit,
      declaredWindowSeconds: answers.find((a) => a?.rateLimit.windowSeconds !== undefined)?.rateLimit
        .windowSeconds,
      resetValuesPerWindow: m.paced.resetValuesPerWindow,
      headerDialect,
      resetSemantics:
        headerDialect !== 'none' && this.client.resetDialects.has(headerDialect)
          ? RESET_SEMANTICS[headerDialect]
          : 'none',
      search: released || (m.search ? searchSummary(m.search) : undefined),
      estimate: queued
        ? { intervalMs: queued.intervalMs, burst: 0 }
        : (m.search?.candidates.estimate() ?? null),
      returnRangeMs: m.returnRangeMs,
      returnSlackMs: 2 * this.stepMs(),
      queue: queued?.queue,
    });
    const counted = refusalsCountEvidence(
      m.recovery.atOnce,
      m.recovery.back?.rateLimit.limit ?? m.exhausted.accepted,
      m.recovery.refusedBefore ?? 0,
    );
    if (counted && m.family === 'window') limiter.evidence.push(counted);
    return m.slowDown && !m.exhausted.refusal ? withSlowDown(limiter, m.slowDown) : limiter;
  }

  /** The dialect most answers spoke; `none` only when none spoke any. */
  private headerDialect(): Dialect | 'none' {
    let best: [Dialect | 'none', number] = ['none', 0];
    for (const entry of this.client.dialects) if (entry[0] !== 'none' && entry[1] > best[1]) best = entry;
    return best[0];
  }

  private notes(m: Measured): string[] {
    const notes: string[] = [];
    const delayed = m.slowDown?.result() && !m.exhausted.refusal;
    if (this.infeasible) notes.push(this.infeasible);
    if (m.paced.behind > 0)
      notes.push(
        delayed
          ? `at the plan rate the server's delays held answers past the end of ${m.paced.behind} window(s)`
          : `the client fell behind the plan rate in ${m.paced.behind} window(s)`,
      );
    if (m.slowDown?.stoppedBecause && !m.exhausted.refusal && !m.slowDown.result())
      notes.push(m.slowDown.stoppedBecause);
    if (m.exhaustMs > this.windowMs && m.exhausted.refusal === undefined && !delayed)
      notes.push(
        `the client took ${Math.round(m.exhaustMs)} ms to send ${m.exhausted.sent} requests, more than a window`,
      );
    return notes;
  }

  /** `--daily`: the rest of the day at the plan rate, until the day's 429. */
  private async walkDay(report: CapacityReport, m: Measured): Promise<void> {
    if (!this.o.daily) return;
    const dayWindow = dailyWindow(this.o.plan);
    if (dayWindow && m.recovery.back && !this.o.signal?.aborted) {
      report.daily = await walkDaily(this.client, {
        minute: this.window,
        day: dayWindow,
        anchor: m.dailyAnchor,
        firstIndex: m.recovery.nextIndex + m.paced.sent,
        signal: this.o.signal,
      });
      report.reasons.push(...judgeDaily(report.daily));
      return;
    }
    report.reasons.push(
      dayWindow
        ? 'the daily quota was not walked: the minute quota never came back'
        : `plan '${this.o.plan.name}' has no window longer than its ${this.window.name}: no daily quota to walk`,
    );
  }
}
