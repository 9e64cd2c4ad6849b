import type { RateWindow } from '../api/plans.ts';
import { mayBeBareRefusal, passedLimiter } from '../api/responses.ts';
import type { TenantMix } from '../api/tenants.ts';
import type { AttemptRecord, AttemptSink } from './attempt.ts';
import { type RunChecksOptions, responseChecks } from './checks/catalogue.ts';
import { type AttemptCheck, type Check, checkContext } from './checks/check.ts';
import { clientChecks } from './checks/client-checks.ts';
import { DEFAULT_CONTRACT } from './checks/contract.ts';
import { CheckTally } from './checks/tally.ts';
import { DialectTally, type HeaderDialect } from './dialects.ts';
import { HeldByLimiter } from './held-by-limiter.ts';
import { type Histogram, newHistogram } from './histogram.ts';
import { busiestTimelines, OperationTimeline, type OperationTimelinePoint } from './operation-timelines.ts';
import { QuotaTimeline } from './quota-timeline.ts';
import { TenantTally } from './tenant-tally.ts';
import { Timeline } from './timeline.ts';
import { ViolationCounter } from './violations.ts';

/** Everything counted for one operation (and, with the same shape, for the whole run). */
export class OperationStats {
  /** Sent to received, µs: what the server and network took. */
  readonly service: Histogram = newHistogram();
  /**
   * Due to received, less our own pacing and backoff waits, µs: what a user arriving on schedule
   * would have seen, including any lag of the generator (the coordinated-omission correction).
   */
  readonly response: Histogram = newHistogram();
  requests = 0;
  readonly statuses: Record<string, number> = {};
  /** The limiter's refusals, whatever their status (the 429-rate figures count these). */
  rateLimited = 0;
  /** The limiter's refusals by status: `{"429": 12, "503": 3}`. */
  readonly refusals: Record<string, number> = {};
  /** 503s with no sign of a limiter: kept away from as refusals, counted apart. */
  unexplained = 0;
  retries = 0;
  readonly transportErrors: Record<string, number> = {};
  /** Responses that came over HTTP/2 (`--http2`); every other response came over HTTP/1.1. */
  http2 = 0;
  pacingWaitMs = 0;
  /** Of `pacingWaitMs`, waited under the server's told budget. */
  budgetWaitMs = 0;
  backoffWaitMs = 0;
  /** Responses of this operation that failed at least one check. */
  checkFailures = 0;
  /** Requests while the workload ran (setup and teardown excluded): the numerator of `rate`. */
  duringWorkload = 0;

  add(a: AttemptRecord, serviceUs: number, responseUs: number): void {
    this.requests++;
    this.service.recordValue(serviceUs);
    this.response.recordValue(responseUs);
    if (a.status === 0) {
      const code = a.errorCode ?? 'unknown';
      this.transportErrors[code] = (this.transportErrors[code] ?? 0) + 1;
    } else {
      this.statuses[a.status] = (this.statuses[a.status] ?? 0) + 1;
      if (a.protocol === 'HTTP/2') this.http2++;
    }
    if (a.kind === 'refused') {
      this.rateLimited++;
      this.refusals[a.status] = (this.refusals[a.status] ?? 0) + 1;
    } else if (a.kind === 'unexplained') this.unexplained++;
    if (a.retried) this.retries++;
    this.pacingWaitMs += a.pacingWaitMs;
    this.budgetWaitMs += a.budgetWaitMs ?? 0;
    this.backoffWaitMs += a.backoffWaitMs;
  }
}

export interface RecorderOptions {
  /** Epoch ms; the timeline counts seconds from here (with `workloadOnly`, from the workload's start). */
  startedAt: number;
  /**
   * Timeline and rates count only the workload, from `measure(true)` to `measure(false)`, so that
   * setup and teardown do not skew them and second 0 is the result's start. A run sets it; direct
   * use of the recorder counts everything.
   */
  workloadOnly?: boolean;
  /** The plan's windows as the target counts them, for the header checks. */
  windows: RateWindow[];
  /**
   * Per key label, when keys of several plans share one recorder (`capacity`): each response is
   * checked against its own plan's windows, not any probed plan's. Labels not in it use `windows`.
   */
  windowsByKey?: ReadonlyMap<string, RateWindow[]>;
  /**
   * How the default response checks judge (the contract among them, which the result names with the
   * dialects seen); `checks` replaces the checks, not the contract the result names.
   */
  checkOptions?: RunChecksOptions;
  /** Response checks; default `responseChecks(checkOptions)` (fresh: several keep state for the run). */
  checks?: readonly Check[];
  /** Checks of the client's own behaviour; default `clientChecks()`. */
  clientChecks?: readonly AttemptCheck[];
  /**
   * A tenant mix: figures by tier (byPlan, byTenantGroup) and the noisy-neighbour stretches, from
   * each attempt's `tenant`; each response is checked against its tenant's own plan windows.
   */
  tenants?: TenantMix;
}

/**
 * Attempts wait in a queue and are counted this many at a time. A run at 2,000 req/s wakes for one
 * or two responses at a time, and each found the recorder's code and its keys' state cold: counted
 * in runs, all but the first find them warm (bench:tenants, 10,000 keys: about 12% less CPU per
 * request in all). Every read of the figures counts the queue first, so no reader sees them behind.
 */
const BATCH = 256;

/** The sink the client writes every attempt to: histograms, counters, checks, violations, timeline. */
export class Recorder implements AttemptSink {
  readonly #overall = new OperationStats();
  readonly #operations = new Map<string, OperationStats>();
  readonly #checks: CheckTally;
  readonly #violations = new ViolationCounter();
  private readonly dialects = new DialectTally();
  /** Responses a delaying limiter (a queue, a slow-down) held, told apart from the service's latency. */
  readonly #held = new HeldByLimiter();
  #timeline: Timeline;
  /** Each operation's seconds, on the timeline's clock (from `timelineStart`). */
  #operationTimelines = new Map<string, OperationTimeline>();
  #timelineStart: number;
  /** Per key: the Remaining announced, the resets and the pauses after 429s, over the same seconds. */
  #quota: QuotaTimeline;
  /**
   * Requests the limiter let through while the workload ran (setup and teardown excluded): the
   * numerator of quota utilisation. The engine says when the workload starts and stops.
   */
  #admittedDuringWorkload = 0;
  /** Keys the limiter admitted, and their bare 403s after that (see mayBeBareRefusal). */
  readonly #admittedKeys = new Set<string>();
  #forbiddenAfterAdmitted = 0;
  /** A tenant mix's figures by tier (absent without a mix). */
  readonly #tenants: TenantTally | undefined;
  private measuring = false;
  /** Attempts already counted in `checkFailures`, so that a verdict given later counts a response once. */
  private readonly failedChecks = new WeakSet<AttemptRecord>();
  /** Attempts recorded and not counted yet (see BATCH). */
  private queue: AttemptRecord[] = [];

  get overall(): OperationStats {
    this.flush();
    return this.#overall;
  }

  get operations(): Map<string, OperationStats> {
    this.flush();
    return this.#operations;
  }

  get checks(): CheckTally {
    this.flush();
    return this.#checks;
  }

  get violations(): ViolationCounter {
    this.flush();
    return this.#violations;
  }

  get timeline(): Timeline {
    this.flush();
    return this.#timeline;
  }

  /** The busiest operations' seconds: their responses and service time p50 and p99. */
  operationTimelines(): Record<string, OperationTimelinePoint[]> {
    this.flush();
    return busiestTimelines([...this.#operationTimelines].map(([id, timeline]) => [id, timeline.snapshot()]));
  }

  get quota(): QuotaTimeline {
    this.flush();
    return this.#quota;
  }

  get admittedDuringWorkload(): number {
    this.flush();
    return this.#admittedDuringWorkload;
  }

  /** Bare 403s to keys admitted before: a limiter's refusal, perhaps, in an authorization failure's words. */
  get forbiddenAfterAdmitted(): number {
    this.flush();
    return this.#forbiddenAfterAdmitted;
  }

  get held(): HeldByLimiter {
    this.flush();
    return this.#held;
  }

  get tenants(): TenantTally | undefined {
    this.flush();
    return this.#tenants;
  }

  /** The engine calls `measure(false)` once the workload's requests have all been answered. */
  measure(on: boolean, at: number = Date.now()): void {
    // What was recorded before the switch counts as it did when it arrived.
    this.flush();
    if (on && this.options.workloadOnly && !this.measuring) {
      this.#timeline = new Timeline(at);
      this.#operationTimelines = new Map();
      this.#timelineStart = at;
      this.#quota = new QuotaTimeline(at);
    }
    if (on && !this.measuring) this.#tenants?.start(at);
    if (!on && this.measuring) this.finish(at);
    this.measuring = on;
  }
  private readonly options: RecorderOptions;

  constructor(options: RecorderOptions) {
    this.options = options;
    this.#checks = new CheckTally(
      options.checks ?? responseChecks(options.checkOptions),
      options.clientChecks ?? clientChecks(),
    );
    this.#timeline = new Timeline(options.startedAt);
    this.#timelineStart = options.startedAt;
    this.#quota = new QuotaTimeline(options.startedAt);
    this.#tenants = options.tenants ? new TenantTally(options.tenants) : undefined;
  }

  /** The dialects the target told its quota in, and the contract they were judged against. */
  headerDialect(): HeaderDialect | undefined {
    this.flush();
    return this.dialects.snapshot(this.options.checkOptions?.contract ?? DEFAULT_CONTRACT);
  }

  /**
   * Gives the verdicts that waited for requests in flight (no request may be in flight any more).
   * Later attempts are still checked; their deferred verdicts wait for the next `finish`.
   */
  finish(at: number = Date.now()): void {
    this.flush();
    this.countLateFailures(this.#checks.settle(at, true));
  }

  record(a: AttemptRecord): void {
    this.queue.push(a);
    if (this.queue.length >= BATCH) this.flush();
  }

  /** Counts the attempts waiting, in the order they were recorded. */
  flush(): void {
    const queue = this.queue;
    if (queue.length === 0) return;
    this.queue = [];
    for (let i = 0; i < queue.length; i++) this.count(queue[i] as AttemptRecord);
  }

  private countLateFailures(attempts: AttemptRecord[]): void {
    for (const a of attempts) {
      if (this.failedChecks.has(a)) continue;
      this.failedChecks.add(a);
      const stats = this.#operations.get(a.operation.id);
      if (stats) stats.checkFailures++;
      this.#overall.checkFailures++;
    }
  }

  private count(a: AttemptRecord): void {
    let stats = this.#operations.get(a.operation.id);
    if (!stats) {
      stats = new OperationStats();
      this.#operations.set(a.operation.id, stats);
    }
    const serviceUs = Math.max(1, Math.round((a.receivedAt - a.sentAt) * 1000));
    const due = a.scheduledAt ?? a.sentAt;
    const responseUs = Math.max(
      serviceUs,
      Math.round((a.receivedAt - due - a.pacingWaitMs - a.backoffWaitMs) * 1000),
    );
    stats.add(a, serviceUs, responseUs);
    this.#overall.add(a, serviceUs, responseUs);
    const violation = this.#violations.observe(a);
    this.#held.observe(a);
    const measured = this.measuring || !this.options.workloadOnly;
    this.#tenants?.add(a, serviceUs, responseUs, violation, measured, this.measuring);
    if (measured) {
      this.#timeline.add(a.receivedAt, a.status, a.kind, serviceUs, a.pacingWaitMs, a.backoffWaitMs);
      this.operationTimeline(a.operation.id).add(a.receivedAt, serviceUs);
      stats.duringWorkload++;
      this.#overall.duringWorkload++;
    }
    if (this.measuring && passedLimiter(a.kind)) this.#admittedDuringWorkload++;
    this.noteForbidden(a);
    this.#checks.observe(a);
    let view = a.rateLimitView;
    if (a.status !== 0 && a.headers) {
      const ctx = checkContext(
        a,
        a.headers,
        a.tenant?.windows ?? this.options.windowsByKey?.get(a.keyLabel) ?? this.options.windows,
      );
      view = ctx.rateLimitView;
      this.dialects.add(ctx.rateLimitView);
      if (this.#checks.evaluate(ctx) > 0) {
        stats.checkFailures++;
        this.#overall.checkFailures++;
        this.failedChecks.add(a);
      }
    }
    if (measured) this.#quota.add(a, view);
    this.countLateFailures(this.#checks.settle(a.receivedAt, false));
  }

  private operationTimeline(id: string): OperationTimeline {
    let timeline = this.#operationTimelines.get(id);
    if (!timeline) {
      timeline = new OperationTimeline(this.#timelineStart);
      this.#operationTimelines.set(id, timeline);
    }
    return timeline;
  }

  private noteForbidden(a: AttemptRecord): void {
    if (a.kind !== 'admitted') return;
    if (mayBeBareRefusal(a.kind, a.status)) {
      if (this.#admittedKeys.has(a.keyLabel)) this.#forbiddenAfterAdmitted++;
    } else if (a.status < 300 && !this.#admittedKeys.has(a.keyLabel)) this.#admittedKeys.add(a.keyLabel);
  }
}
