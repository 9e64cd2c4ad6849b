import { type Plan, type RateWindow, shortestWindow } from '../../api/plans.ts';
import type { RefusalStatuses } from '../../api/responses.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { AttemptSink } from '../../record/attempt.ts';
import { type Ramp, rampFromRest } from '../discover/concurrency.ts';
import { type Exhausted, exhaustWindow, noBurst } from '../discover/exhaust.ts';
import type { Look } from '../discover/look.ts';
import { SlowDownWatch } from '../discover/slow-down.ts';
import { familyWithRefusals, refusedWithinWindow } from '../discover/window-refusals.ts';
import { EXCESS_BOUND, type Family, type Pace, recoveryStepMs, windowGuardMs } from '../model.ts';
import { admitted, ProbeClient, type ProbeClientOptions, type ProbeReply } from '../probe-client.ts';
import type { ProbedOperation } from '../probed-operation.ts';
import { type BlockProbe, blockAfter, longerThanWindow, returnJudgedBy, stallReason } from './block.ts';
import { afterFirstBurst, windowFirstEstimateMs } from './estimate.ts';
import { longerFromRest, longestWithinReachMs, spendLonger, windowsWithinReach } from './longer-windows.ts';
import { defaultMaxWaitMs } from './max-wait.ts';
import type { PhasesMeasured } from './measured.ts';
import { probeModelReturn, searchRateAfter } from './model-return.ts';
import { type PacedPhase, pacedAnchorAfterModel, pacedWindows, windowEnd } from './paced-window.ts';
import { announced, probeRecovery, type Recovery, returnedLimit } from './recovery.ts';
import { rateUnderBlock, type UnderBlockProbe } from './under-block.ts';

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** How requests are sent (`transport`, a test's simulated target) and reach the target (`network`). */
export interface CapacityProbeOptions extends Pick<ProbeClientOptions, 'transport' | 'network'> {
  baseUrl: string;
  apiKey: string;
  /** The plan as the target counts it (time-scaled). */
  plan: Plan;
  /** The same plan unscaled: what it promises per minute and per day. */
  promised: Plan;
  timeScale: number;
  /** The request every probe sends (the pet store's page of one pet unless `--spec` named another). */
  probe: ProbedOperation;
  sink: AttemptSink;
  /** Windows at the plan rate (default 2). */
  windows?: number;
  /** Then walk the daily quota at the plan rate until its 429. */
  daily?: boolean;
  /** Requests in flight at most (the gate lowers it as the window runs out). */
  maxInFlight?: number;
  /** `--max-wait`: the longest single wait the probe accepts (default: defaultMaxWaitMs). */
  maxWaitMs?: number;
  timeoutMs?: number;
  /** `--refusal-status`: statuses the target's limiter refuses with besides 429. */
  refusalStatuses?: RefusalStatuses;
  /** Told what the probe is about to do when it decides a longer phase (the rate search). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

const NO_EXHAUST: Exhausted = noBurst();

/**
 * The measure stage of one plan's probe (run-capacity.ts runs the stages): from the first look on,
 * the plan rate for N windows, one window (or a limiter at rest) exhausted, the quota's return, and,
 * against a limiter that refills continuously or says nothing, its sustained rate. Every request is
 * the probed operation's, recorded like any attempt; after a 429 nothing leaves before its
 * Retry-After. It holds the key's client and the stall every later stage stops at.
 */
export class MeasurePhases {
  readonly client: ProbeClient;
  readonly window: RateWindow;
  readonly windowMs: number;
  readonly guardMs: number;
  private readonly maxWaitMs: number;
  /** Set by the first refusal whose wait outlives the window: every phase after it stops. */
  private stalledReason: string | undefined;
  /** When the probe began: its duration and its time estimates count from there. */
  readonly started: number;
  private readonly o: CapacityProbeOptions;

  constructor(o: CapacityProbeOptions) {
    this.o = o;
    const w = shortestWindow(o.plan.windows);
    if (!w) throw new Error(`plan '${o.plan.name}' has no windows`);
    this.window = w;
    this.windowMs = w.seconds * 1000;
    this.guardMs = windowGuardMs(this.windowMs);
    this.maxWaitMs = o.maxWaitMs ?? defaultMaxWaitMs(o.plan);
    this.client = new ProbeClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      windowMs: this.windowMs,
      probe: o.probe,
      sink: o.sink,
      keyLabel: o.plan.name,
      maxInFlight: o.maxInFlight,
      timeoutMs: o.timeoutMs,
      refusalStatuses: o.refusalStatuses,
      transport: o.transport,
      network: o.network,
    });
    this.started = now();
  }

  /** Why the probe stopped early, if it did: a refusal whose wait outlived the window. */
  get stalledBy(): string | undefined {
    return this.stalledReason;
  }

  /** The phases, in the order the first look chose. */
  measure(look: Look): Promise<PhasesMeasured> {
    if (look.order !== 'window-first') return this.modelFirst(look);
    this.announceWindowFirst(look);
    return this.windowFirst(look);
  }

  /** Told once the first answer announced a window: the rest of the probe is then known. */
  private announceWindowFirst(look: Look): void {
    const latencyMs = look.first.receivedAt - look.first.sentAt;
    const windows = this.o.windows ?? 2;
    const about = windowFirstEstimateMs({
      windowMs: this.windowMs,
      limit: this.window.limit,
      windows,
      latencyMs,
      longerMs: longestWithinReachMs(this.o.plan, this.window, windows * this.window.limit, this.maxWaitMs),
    });
    this.o.log?.(
      `the first answer took ${Math.round(latencyMs)} ms and announced a window: about ${seconds(now() - this.started + about)} in all`,
    );
  }

  /**
   * A refusal whose wait outlives the window is not the window's (a spent day, a block): past
   * `--max-wait`, or where it is no block (probeBlock), the probe stops and says so.
   */
  readonly stalled = (): boolean => {
    const wait = this.client.pauseUntil - now();
    if (this.stalledReason === undefined && this.longerThanWindow(wait))
      this.stalledReason = stallReason(wait, this.maxWaitMs, this.window);
    return this.stalledReason !== undefined;
  };

  private longerThanWindow(waitMs: number): boolean {
    return longerThanWindow(waitMs, this.windowMs, this.guardMs);
  }

  private blockAfter(exhausted: Exhausted): Promise<BlockProbe | undefined> {
    return blockAfter(this.client, exhausted, {
      window: this.window,
      guardMs: this.guardMs,
      maxWaitMs: this.maxWaitMs,
      log: this.o.log,
      signal: this.o.signal,
    });
  }

  private underBlockProbe(): UnderBlockProbe {
    return {
      client: this.client,
      windowMs: this.windowMs,
      stalled: this.stalled,
      signal: this.o.signal,
      paced: (anchor, pace, firstIndex, infeasible, first) =>
        this.paced(anchor, pace, firstIndex, infeasible, first),
    };
  }

  /** The plan-rate windows from `anchor`, unless the plan rate cannot be kept (`infeasible`). */
  private paced(
    anchor: number,
    pace: Pace,
    firstIndex: number,
    infeasible: string | undefined,
    first?: ProbeReply,
  ): Promise<PacedPhase> {
    return pacedWindows(this.client, {
      anchor,
      windows: this.o.windows ?? 2,
      limit: this.window.limit,
      windowMs: this.windowMs,
      pace,
      firstIndex,
      first,
      infeasible,
      stalled: this.stalled,
      signal: this.o.signal,
    });
  }

  /** A window: the plan rate first, then one fresh window exhausted, then its return. */
  private async windowFirst(look: Look): Promise<PhasesMeasured> {
    const client = this.client;
    const signal = this.o.signal;
    client.shots = undefined;
    const paced = await this.paced(look.first.sentAt, 'spread', 1, undefined, look.first);
    const reach = windowsWithinReach(this.o.plan, this.window, paced.sent, this.maxWaitMs);
    const longerBack = this.longerWindowsBack(reach, paced);
    // A server whose windows are aligned to the clock may still count the last paced window at the
    // anchor: its reset says when that window ends. Exhausting before then would meet the 429 early.
    const lastReset = paced.last && paced.last.resets.length > 0 ? Math.max(...paced.last.resets) : undefined;
    const end = windowEnd(this.windowMs, lastReset);
    const anchor = Math.max(end > paced.next ? end + 1 : paced.next, longerBack);
    if (!this.stalled()) await sleepUntil(anchor, signal);
    client.shots = [];
    const exhaustStart = now();
    let ramp: Ramp | undefined;
    let exhausted = NO_EXHAUST;
    if (!signal?.aborted && !this.stalled()) {
      ramp = await this.rampFresh();
      exhausted = await exhaustWindow(client, this.window.limit, signal, undefined, {
        prior: ramp.exhausted,
      });
    }
    const exhaustMs = now() - exhaustStart;
    const block = await this.blockAfter(exhausted);
    const recovery = await probeRecovery(client, returnJudgedBy(exhausted, block), {
      windowMs: this.windowMs,
      stepMs: recoveryStepMs(this.o.timeScale),
      stalled: this.stalled,
      signal,
    });
    const limit = returnedLimit(exhausted, recovery.back);
    recovery.refusedBefore = refusedWithinWindow(client.shots, recovery.back, this.windowMs);
    const family = familyWithRefusals(recovery.atOnce, limit, recovery.refusedBefore);
    const search =
      family === 'spacing' && !signal?.aborted
        ? await searchRateAfter(client, exhausted, recovery.nextIndex, this.modelOptions())
        : undefined;
    client.shots = undefined;
    const { guardMs, maxWaitMs } = this;
    const longer =
      family === 'window' && longerBack > 0 && !this.stalledReason
        ? await spendLonger(client, {
            short: this.window,
            guardMs,
            freshAt: exhausted.startedAt,
            reach,
            maxWaitMs,
            log: this.o.log,
            signal,
          })
        : undefined;
    const wholeAgain = windowEnd(this.windowMs, recovery.wholeAgainAt);
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
      ramp,
      infeasible: undefined,
      block,
      longer,
    };
  }

  /**
   * The plan's longer windows within reach counted the paced requests too: the window is exhausted
   * once every one of them has left the longest, or its first 429 would be a longer window's. 0: none.
   */
  private longerWindowsBack(reach: readonly RateWindow[], paced: PacedPhase): number {
    if (reach.length === 0 || paced.sent === 0 || this.stalled()) return 0;
    const longest = Math.max(...reach.map((w) => w.seconds * 1000));
    this.o.log?.(
      `the plan's ${Math.round(longest / 100) / 10} s window counted the paced requests: the window is exhausted once they have left it`,
    );
    return now() + longest + this.guardMs;
  }

  /**
   * A fresh window's start, at growing concurrency as from rest: Remaining bounds each burst, so a
   * refusal while the window still had room was for the requests in flight.
   */
  private async rampFresh(): Promise<Ramp> {
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
    return ramp;
  }

  /**
   * Anything else: the burst from rest (begun at growing concurrency, which tells a concurrency
   * limit or a queue), its return and the rate first; then the plan rate, at a pace the limiter admits.
   */
  private async modelFirst(look: Look): Promise<PhasesMeasured> {
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
    if (ramp.queue && ramp.releaseIntervalMs) return this.queueFirst(look, ramp, now() - exhaustStart);
    const infeasible = this.announce(
      ramp,
      ramp.exhausted.refusal ? 0 : this.window.limit + EXCESS_BOUND - ramp.exhausted.sent,
    );
    const exhausted = ramp.halted
      ? ramp.exhausted
      : await exhaustWindow(client, this.window.limit, signal, undefined, {
          prior: ramp.exhausted,
          halt: slowDown.observe,
        });
    const exhaustMs = now() - exhaustStart;
    const block = await this.blockAfter(exhausted);
    if (block?.block) {
      const under = { look, exhausted, exhaustMs, block, slowDown, ramp, infeasible };
      return rateUnderBlock(this.underBlockProbe(), under);
    }
    const model = await probeModelReturn(client, exhausted, this.modelOptions());
    client.quietBackoff = 'window';
    client.shots = undefined;
    const { longer, wholeAt } = await this.longerAfterModel(model.family);
    const anchor = pacedAnchorAfterModel(model, {
      earliest: Math.max(now(), client.pauseUntil, wholeAt),
      windowMs: this.windowMs,
      guardMs: this.guardMs,
    });
    const pace = model.family === 'spacing' ? 'spaced' : 'spread';
    const paced = await this.paced(anchor, pace, model.recovery.nextIndex, infeasible);
    const dailyAnchor = Math.max(paced.next, now());
    const measured = { look, paced, exhausted, exhaustMs, ...model, dailyAnchor, slowDown, ramp, infeasible };
    return { ...measured, block, longer };
  }

  /**
   * A window whose plan has longer windows within reach: the burst and its return spent them too,
   * and the plan-rate windows would meet their refusal (a wait longer than the window). They are
   * measured as the window-first order measures them, and the paced windows begin once whole again.
   */
  private async longerAfterModel(family: Family) {
    const windows = this.o.windows ?? 2;
    const reach =
      family === 'window' && !this.stalled()
        ? windowsWithinReach(this.o.plan, this.window, windows * this.window.limit, this.maxWaitMs)
        : [];
    const { guardMs, maxWaitMs } = this;
    const short = this.window;
    return longerFromRest(this.client, {
      short,
      guardMs,
      reach,
      maxWaitMs,
      log: this.o.log,
      signal: this.o.signal,
    });
  }

  /**
   * A limiter that queues: its burst and rate were read from the held answers' release, so the
   * interval search (which would read a held answer as an admission) does not run. The quota is
   * back an interval after the last release; the plan rate then goes at the plan's spacing.
   */
  private async queueFirst(look: Look, ramp: Ramp, exhaustMs: number): Promise<PhasesMeasured> {
    const client = this.client;
    const interval = ramp.releaseIntervalMs as number;
    const queued = { queue: ramp.queue as number, intervalMs: interval, lastReleaseAt: ramp.lastReleaseAt };
    const infeasible = this.announce(ramp, 0, interval);
    await sleepUntil(Math.max(ramp.lastReleaseAt + interval, client.pauseUntil + 1), this.o.signal);
    const r = await client.request(ramp.nextIndex++);
    const back = admitted(r) ? r : undefined;
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
    const paced = await this.paced(
      Math.max(now(), client.pauseUntil),
      'spaced',
      recovery.nextIndex,
      infeasible,
    );
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
      ramp,
      queued,
      infeasible,
    };
  }

  /** The time told again, now that the latency and the order are known; returns why the plan rate cannot be kept, if it cannot. */
  private announce(ramp: Ramp, exhaustLeft: number, queueIntervalMs?: number): string | undefined {
    const { infeasible, line } = afterFirstBurst({
      windowMs: this.windowMs,
      limit: this.window.limit,
      windowName: this.window.name,
      windows: this.o.windows ?? 2,
      ramp,
      exhaustLeft,
      queueIntervalMs,
      elapsedMs: now() - this.started,
    });
    this.o.log?.(line);
    return infeasible;
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
}
