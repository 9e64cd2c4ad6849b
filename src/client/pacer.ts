import { pacedByGap } from '../api/limiter-kinds.ts';
import type { PacingCause } from '../api/pacing-causes.ts';
import { toldFields } from '../api/rate-limit-dialect.ts';
import type { RateLimitState } from '../api/rate-limit-headers.ts';
import { keepsAway, type ResponseKind } from '../api/responses.ts';
import { AdaptiveSpacing, type SpacingState } from './adaptive-spacing.ts';
import { type PacerOptions, PacerPlan } from './pacer-plan.ts';
import { type QuotaLog, quotaLogs } from './quota-log.ts';
import type { QuotaSpec } from './quota-store.ts';

export { type PacerOptions, PacerPlan } from './pacer-plan.ts';
/**
 * Decides when the next request of one API key may leave. Five rules, all of which must allow it,
 * because each guards against a different way a server refuses a key:
 *
 * 1. Quota pacing (enforce on): in any span of window + guard, at most `limit` sends, for every
 *    window of the plan (a sliding log, which keeps any fixed window of the server within its limit
 *    whatever its phase), and an even spacing of (window + guard) / limit for the shortest window so
 *    that traffic is smooth rather than a burst at each window start.
 * 2. Server feedback: a response that says `Remaining: r` leaves r sends for the rest of that window,
 *    minus those we sent after it; when that budget is spent we hold until the reported reset. This
 *    keeps us in step when the server counts differently or another client shares the key.
 * 3. Pause: after a 429, nothing leaves until its Retry-After has passed (the ban guard).
 * 4. Gap (AdaptiveSpacing, in raw mode too): the minimum time between two sends that a limiter
 *    between sends (GCRA, leaky bucket) needs, and the rate a 429 without a told wait halved.
 * 5. In flight: no more requests awaiting an answer than a concurrency limit allows (told by
 *    `--limiter concurrency:N` or learned), one at a time after a 429 until one is admitted, and in
 *    raw mode no more than the ban guard's overshoot where the server announces no budget: each
 *    request in flight may be one more 429.
 *
 * Its state is kept small (a key of a tenant mix is one of thousands): the plan's constants live in
 * a shared PacerPlan, and the logs grow with the sends made.
 */
export class Pacer {
  private readonly plan: PacerPlan;
  /** Every window's sliding log, in one ring (none in raw mode). */
  private readonly log: QuotaLog;
  /** The next slot of the even spacing; it advances on a grid so that late timers do not lower the rate. */
  private nextSlot = Number.NEGATIVE_INFINITY;
  private seq = 0;
  /** Sends not yet answered. */
  inFlight = 0;
  /** Nothing leaves before this time (epoch ms); the pause began at `pausedFrom`. */
  pausedUntil = 0;
  pausedFrom = 0;
  /**
   * Budget from the latest feedback: requests left, as of send number `budgetSeq`, valid until
   * `budgetUntil`. Not read before `budgetUntil` is set; a whole number, so V8 keeps it unboxed.
   */
  private budget = 0;
  private budgetSeq = 0;
  private budgetUntil = 0;
  private budgetFromSeq = -1;
  /** The word that set the budget, kept (by reference) only where it spent it: what names the hold. */
  private budgetWord: RateLimitState | undefined;
  /**
   * Per window limit: latest receive time of a response that was first in its window (an upper bound
   * of the window's start). Servers mostly describe one window (the one closest to running out), so
   * the first limit's is kept in two fields, and any other as pairs [limit, time] made on first use:
   * a key of a mix never pays a Map's hundred bytes for one number.
   */
  private startLimit = -1;
  private startAt = 0;
  private moreStarts: number[] | undefined;
  /** The most Remaining any answer showed (until one does, a full window is assumed). */
  private mostRemaining: number | undefined;
  /**
   * The latest answer told no quota at all: the server announces no budget to stay within. Before
   * the first answer nothing has been told either: raw mode's first burst (a run that starts behind
   * its schedule sends all its virtual users at once) would otherwise meet a GCRA whose one slot
   * leaves every other request a strike, and the seed's ban comes at the sixth.
   */
  private silent = true;
  /** The limit the server last described, at first the plan's shortest window's. */
  private lastLimit: number;
  /** A run's setup or teardown: raw mode keeps the plan's gaps (`PacerPlan.preparingGapMs`). */
  preparing = false;
  private readonly spacing: AdaptiveSpacing;

  /** `options`, or the plan built from them once for many keys. */
  constructor(options: PacerOptions | PacerPlan) {
    const plan = options instanceof PacerPlan ? options : new PacerPlan(options);
    this.plan = plan;
    this.log = quotaLogs(plan.logWindows);
    this.spacing = new AdaptiveSpacing(plan.spacingStart);
    this.lastLimit = plan.shortestLimit;
  }

  get options(): PacerOptions {
    return this.plan.options;
  }

  /** The same spacing and windows for a store shared with other generators; none in raw mode. */
  quotaSpec(): QuotaSpec | undefined {
    return this.plan.spec;
  }

  /**
   * Requests the server still admits by its last word, after the ones sent since. When that word has
   * lapsed (its window is over) or none came yet, pacing mode says Infinity: the sliding log already
   * bounds any burst. Raw mode assumes a fresh window of the last limit seen (or the plan's), so
   * that the requests piled up behind a pause do not all leave at once and earn a ban; `peek` only
   * looks (a status line must not start that window at the moment it asks).
   */
  private remainingBudget(now: number, peek = false): number {
    if (now >= this.budgetUntil) {
      if (this.options.enforce) return Number.POSITIVE_INFINITY;
      // A window's full limit, if the server ever showed about that much left; a bucket that never
      // shows more than its burst (a GCRA's 0) is not assumed to hold more after its word lapses.
      const assumed = Math.min(this.lastLimit, (this.mostRemaining ?? Number.POSITIVE_INFINITY) + 1);
      if (peek) return assumed;
      this.budget = assumed;
      this.budgetSeq = this.seq;
      this.budgetFromSeq = this.seq;
      this.budgetUntil = now + (this.plan.windowMsByLimit.get(this.lastLimit) ?? this.plan.shortestMs);
    }
    return this.budget - (this.seq - this.budgetSeq);
  }

  /**
   * Earliest time one more send may leave, or Infinity when it must wait for a response (too many
   * requests in flight beyond the budget). `pacing` is the part owed to pacing, `pause` to a 429.
   */
  earliest(now: number, peek = false): { at: number; cause: PacingCause } {
    if (this.pausedUntil > now) return { at: this.pausedUntil, cause: 'pause' };
    let at = now;
    let cause: Exclude<PacingCause, 'pause'> = 'ready';
    if (this.nextSlot > at) {
      at = this.nextSlot;
      cause = 'pacing';
    }
    const free = this.log.earliest();
    if (free > at) {
      at = free;
      cause = 'pacing';
    }
    const gap = this.spacing.earliest();
    if (gap > at) {
      at = gap;
      cause = 'pacing';
    }
    // A concurrency limit: the next send waits for an answer, whatever the rate allows.
    if (this.inFlight >= this.spacing.maxInFlight())
      return { at: Number.POSITIVE_INFINITY, cause: 'inflight' };
    // After a 429, one request at a time until one is admitted: a burst into a limiter that has just
    // said no (a GCRA whose one slot a backlog all wants) is the run of 429s the seed's ban counts.
    if (this.spacing.consecutive > 0 && this.inFlight > 0 && Number.isFinite(this.plan.maxOvershoot))
      return { at: Number.POSITIVE_INFINITY, cause: 'inflight' };
    // Raw mode against a server that announces no budget: no more in flight than the overshoot the
    // ban guard allows past one, since every one of them may be the 429 after a 429.
    if (!this.options.enforce && this.silent && this.inFlight > this.plan.maxOvershoot)
      return { at: Number.POSITIVE_INFINITY, cause: 'inflight' };
    const budget = this.remainingBudget(now, peek);
    if (budget <= 0) {
      if (this.options.enforce) {
        if (this.budgetUntil > at) {
          at = this.budgetUntil;
          cause = 'budget';
        }
      } else if (budget <= -this.plan.maxOvershoot || this.inFlight > this.plan.maxOvershoot) {
        // Raw mode past the budget: wait for an answer (or the reset) before risking more 429s. What
        // holds it is the server's told budget, which the ban guard lets it overshoot this far only.
        return { at: this.inFlight > 0 ? Number.POSITIVE_INFINITY : this.budgetUntil, cause: 'budget' };
      }
    }
    return { at, cause };
  }

  /** Records a send; returns its sequence number for `observe`. */
  sent(at: number): number {
    // On time or a little late (half a spacing at most): the next slot is one spacing after this
    // one's, so a timer that fired late is made up for. Later than that (an idle spell, the first
    // send) the grid restarts one spacing after now: no credit, since two sends at once are the
    // pair a GCRA without burst (nginx limit_req) rejects. Where the limiter may be one, nothing is
    // made up, and no gap is under minGapMs: a send 25 ms late followed by one on its slot came
    // 979 ms after it, and nginx at 60 r/m refused that one.
    const { spacingMs } = this.plan;
    const slot = (at - this.nextSlot > spacingMs / 2 ? at : this.nextSlot) + spacingMs;
    this.nextSlot = Math.max(slot, at + this.minGapMs());
    this.log.add(at);
    this.inFlight++;
    this.spacing.sent(this.seq + 1, at, this.inFlight);
    return ++this.seq;
  }

  /**
   * Send `seq` was written to its connection at `at`, later than it was let go: where the limiter
   * may count gaps, the next send keeps its gap from then. nginx at 60 r/m refused a run's second
   * request, sent 1010 ms after its first, which had left 30 ms late on a new connection.
   */
  departed(seq: number, at: number): void {
    const gap = this.minGapMs();
    if (seq === this.seq && gap > 0) this.nextSlot = Math.max(this.nextSlot, at + gap);
  }

  private minGapMs(): number {
    return this.preparing ? Math.max(this.plan.minGapMs, this.plan.preparingGapMs) : this.plan.minGapMs;
  }

  /**
   * Feedback from the response to send `seq` (received at `at`), or undefined for a transport error.
   * `kind` tells the gap whether the server answered without refusing.
   */
  observe(
    seq: number,
    headers: RateLimitState | undefined,
    at: number,
    kind: ResponseKind = 'transport-error',
  ): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (kind === 'transport-error') this.spacing.forget(seq);
    // A refusal's send is let go by rateLimited, which still wants its gap.
    else if (!keepsAway(kind)) this.spacing.answered(seq, at);
    if (kind !== 'transport-error') this.silent = headers === undefined;
    if (headers?.maxInFlight !== undefined) this.spacing.toldMaxInFlight(headers.maxInFlight);
    if (!headers || headers.remaining === undefined || headers.reset === undefined) return;
    if (headers.limit !== undefined) this.lastLimit = headers.limit;
    this.mostRemaining = Math.max(this.mostRemaining ?? 0, headers.remaining);
    // Responses can come back out of order: only a later send's word replaces the budget.
    if (seq < this.budgetFromSeq && at < this.budgetUntil) return;
    // Reset is whole seconds, rounded up: holding until it can waste most of a second per window.
    // For a window we saw begin (the response that left limit - 1), its start + length is a tighter
    // bound, assuming the fixed windows our plans describe.
    let until = headers.reset * 1000;
    // The plan's window when it has one of this limit (exact, where a policy's `w` is whole seconds),
    // else the window the server's policy declares.
    const windowMs =
      headers.limit === undefined
        ? undefined
        : (this.plan.windowMsByLimit.get(headers.limit) ??
          (headers.windowSeconds === undefined ? undefined : headers.windowSeconds * 1000));
    if (windowMs !== undefined && headers.limit !== undefined) {
      if (headers.remaining === headers.limit - 1) this.setWindowStart(headers.limit, at);
      const start = this.windowStart(headers.limit);
      if (start !== undefined && start + windowMs > at && start + windowMs < until) until = start + windowMs;
    }
    until = this.heldNoLongerThan(until);
    if (until <= at) return;
    this.budgetFromSeq = seq;
    // Requests still in flight may reach the server after this one even if sent before it (another
    // connection, a queue): count them all against the budget. Over-counting only makes us careful.
    this.budget = headers.remaining - this.inFlight;
    this.budgetSeq = this.seq;
    this.budgetUntil = until;
    this.budgetWord = this.budget <= 0 ? headers : undefined;
  }

  /** The fields that set the budget as sent (`RateLimit remaining=0, reset=10`), built when asked. */
  toldFields(): string | undefined {
    const w = this.budgetWord;
    if (w === undefined) return undefined;
    const told = w.headers && w.dialect ? toldFields(w.headers, w.dialect) : undefined;
    return told ?? `Remaining ${w.remaining}, Reset ${Math.ceil(w.reset ?? 0)}`;
  }

  private windowStart(limit: number): number | undefined {
    if (limit === this.startLimit) return this.startAt;
    const more = this.moreStarts;
    if (more) for (let i = 0; i < more.length; i += 2) if (more[i] === limit) return more[i + 1];
    return undefined;
  }

  private setWindowStart(limit: number, at: number): void {
    if (limit === this.startLimit || this.startLimit < 0) {
      this.startLimit = limit;
      this.startAt = at;
      return;
    }
    const more = this.moreStarts;
    if (more === undefined) {
      this.moreStarts = [limit, at];
      return;
    }
    for (let i = 0; i < more.length; i += 2)
      if (more[i] === limit) {
        more[i + 1] = at;
        return;
      }
    more.push(limit, at);
  }

  /**
   * Where the limiter is given (`--limiter`) as other than a fixed window, a spent budget holds only
   * until the next send it admits, not until its Reset: a GCRA's or token bucket's Remaining is its
   * burst headroom and Reset when the bucket is full (whole seconds rounded up, or more than one
   * emission interval away), a sliding counter's Reset is when the next period has passed (its
   * estimate falls continuously, and the plan's gap keeps below it), and a sliding log's Reset is
   * when its newest request ages out, while the oldest frees a slot sooner. Held to Reset, each
   * paces at a fraction of its rate. A model
   * only learned from a 429 does not count: a window's plan told too high draws one too, and its
   * Remaining 0 must hold until Reset.
   */
  private heldNoLongerThan(until: number): number {
    const model = this.options.limiter;
    if (model && pacedByGap(model)) return Math.min(until, this.spacing.earliest());
    if (model === 'sliding-window' && this.plan.logWindows.length > 0)
      return Math.min(until, this.log.earliest());
    return until;
  }

  /**
   * A 429 to send `seq`; `told`: it said when to come back (Retry-After or a reset); `quotaLeft`:
   * its Remaining was above 0, so no window refused it. Returns how many 429s in a row the key has
   * met, this one included: a backoff's exponent.
   */
  rateLimited(seq: number, told: boolean, at: number, quotaLeft = false): number {
    const plan = this.plan;
    const planGapMs = plan.options.enforce ? plan.spacingMs : 0;
    this.spacing.rateLimited(seq, told, planGapMs, plan.intervalMs, at, quotaLeft);
    return this.spacing.consecutive;
  }

  /**
   * The server's latest word on its budget, lapsed or not: the limit it described, the sends it
   * still admitted after ours since, and until when (its Reset). What a shared store that forgot its
   * reservations is told in their place.
   */
  serverWord(): { limit: number; remaining: number; until: number } | undefined {
    if (this.budgetFromSeq < 0 || !this.options.enforce) return undefined;
    return {
      limit: this.lastLimit,
      remaining: this.budget - (this.seq - this.budgetSeq),
      until: this.budgetUntil,
    };
  }

  /** What the gap learned (for the result). */
  spacingState(): SpacingState {
    return this.spacing.state();
  }

  pause(until: number, from: number = Number.NEGATIVE_INFINITY): void {
    if (until <= this.pausedUntil) return;
    // A pause that extends one still running keeps its start.
    if (this.pausedUntil <= from) this.pausedFrom = from;
    this.pausedUntil = until;
  }
}
