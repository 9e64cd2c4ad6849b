import { keepsAway } from '../api/responses.ts';
import type { AttemptRecord } from './attempt.ts';
import { type Histogram, newHistogram } from './histogram.ts';
import { ServiceSpread } from './service-spread.ts';

/**
 * Responses a delaying limiter held (nginx `limit_req` with a burst and no `nodelay`, which queues
 * the excess and releases it at its rate; express-slow-down, which adds a growing delay past a
 * threshold), told from timing alone: neither says anything in headers, and without this their
 * waits read as the service being slow.
 *
 * Per key, over its last WINDOW answers (429s and transport errors aside: a refusal is not held):
 * - a queue releases at its rate whatever the sends: the answers come back at a steady interval T,
 *   while their holds (latency beyond the operation's fastest success) do not step evenly;
 * - a slow-down adds a fixed step D per request: the holds grow by D each, while the gaps between
 *   answers follow the sends, not a clock.
 * A window that shows both (a burst sent at once, or sends at a steady rate, into either) is held
 * but of no kind yet; it takes the kind its key showed most, and where such a climb stops tells
 * the two apart (#cappedClimb), as does a slow-down's cap (#atCap). A slow service does neither:
 * every answer slow gives holds near 0, and jitter gives neither steady gaps nor steady steps. A
 * queue's interval must also be at least twice the fastest answer, so that a service serialising
 * its own work (answers back to back, each as slow as the first) is not taken for one. Steady gaps
 * are also what a quick service gives sends at a steady rate (a paced run, a capacity probe): half a
 * window's answers must have been held beyond the service's own spread (service-spread.ts: 10 ms, or
 * three times the p99 of the holds under it, 150 ms at most), or its timing is the sends', and a few loopback
 * jitters are not a queue releasing 175/s. A hold under that margin, or under half the interval or
 * step, is noise, and so is a slow-down's step under 30 ms (holds are allowed
 * 15 ms of a busy machine's timer lateness). Cost: a ring of WINDOW answers per key, two sorts of seven
 * numbers and a histogram entry per answer, no allocation (about 0.5 µs an answer, histograms included:
 * the service spread added a third).
 */

export type HeldKind = 'queue' | 'slow-down' | 'both' | 'unknown';

/** What held `responses`, of which a queue held `queued` and a slow-down `slowed`. */
export function heldKind(queued: number, slowed: number): HeldKind {
  if (queued > 0 && slowed > 0) return 'both';
  return queued > 0 ? 'queue' : slowed > 0 ? 'slow-down' : 'unknown';
}

export interface HeldSnapshot {
  responses: number;
  kind: HeldKind;
  /** Latency beyond the operation's fastest answer, summed over the held responses, ms. */
  totalMs: number;
  longestMs: number;
  /** Of `responses`, those a queue held, and those a slow-down held; the rest could not be told. */
  queued: number;
  slowed: number;
  /** The queues' interval between releases, ms (weighted by the responses each held). */
  intervalMs?: number;
  /** The slow-downs' step per request, ms (weighted likewise). */
  stepMs?: number;
  /** Service time (µs) of every response but the held ones, refusals and errors included. */
  unheld: Histogram;
}

/** As the recorder counts service time: µs, never 0. */
const serviceUs = (sentAt: number, receivedAt: number) =>
  Math.max(1, Math.round((receivedAt - sentAt) * 1000));

/** Answers per window: seven gaps and seven steps, so that chance (jitter) rarely lines them all up. */
const WINDOW = 8;
/** Ring fields per answer. */
const SENT = 0;
const RECEIVED = 1;
const HOLD = 2;
/** 1 once counted, so that overlapping windows count an answer once. */
const COUNTED = 3;
const FIELDS = 4;
/** Steady: each value within 8% of the median, and never closer than timer resolution allows. */
const TOLERANCE = 0.08;
const TOLERANCE_FLOOR_MS = 2;
/**
 * A hold's floor is wider: a hold is a latency less the fastest, and on a busy machine the limiter's
 * timer and the client's wake-up each come late by some milliseconds (a real slow-down's 100 ms steps
 * read 110, 87, 104 under load, and its climb went unnamed). Gaps keep the narrow floor: a capped
 * climb is told from a queue by gaps 14% apart.
 */
const HOLD_TOLERANCE_FLOOR_MS = 15;
/** A step or interval shorter than this is timer noise, not a limiter. */
const UNIT_FLOOR_MS = 5;

/** What a window showed; Either: steady gaps and steady steps at once. */
const Verdict = { None: 0, Queue: 1, SlowDown: 2, Either: 3 } as const;
type Verdict = (typeof Verdict)[keyof typeof Verdict];

class KeyState {
  /**
   * Fastest answer per operation, ms: the service's own latency. A success's: a quick 404 or 500
   * says nothing of how long the work takes. Until an operation has one, its fastest of any status.
   */
  readonly baseline = new Map<string, number>();
  readonly anyBaseline = new Map<string, number>();
  readonly ring = new Float64Array(WINDOW * FIELDS);
  /** Answers pushed so far (the ring holds the last WINDOW). */
  seen = 0;
  queued = 0;
  slowed = 0;
  either = 0;
  /** Sums of interval × responses and step × responses, for the weighted means. */
  intervalWeighted = 0;
  stepWeighted = 0;
  /** The last slow-down's step, and the longest hold it gave: where it stops growing (its cap). */
  slowStep = 0;
  slowCap = 0;
  /** The last window of no kind: its gap and step (a climb a queue's ramp and a slow-down share). */
  climbGap = 0;
  climbStep = 0;
  /** The last window that passed: its kind and unit, which a following answer may continue. */
  lastVerdict: Verdict = Verdict.None;
  lastUnit = 0;
}

/** Insertion sort of the window's ring offsets by send time: eight answers, nearly in order already. */
function sortBySent(order: Int32Array, ring: Float64Array): void {
  for (let i = 1; i < order.length; i++) {
    const at = order[i]!;
    const sent = ring[at + SENT]!;
    let j = i - 1;
    while (j >= 0 && ring[order[j]! + SENT]! > sent) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = at;
  }
}

const tolerance = (unit: number, floor = TOLERANCE_FLOOR_MS) => Math.max(TOLERANCE * unit, floor);

export class HeldByLimiter {
  readonly #keys = new Map<string, KeyState>();
  /** Scratch for medians, reused: no allocation per attempt. */
  readonly #scratch = new Float64Array(WINDOW - 1);
  readonly #order = new Int32Array(WINDOW);
  #totalMs = 0;
  #longestMs = 0;
  /** The target's own latency spread: a hold must stand clear of it (service-spread.ts). */
  readonly #spread = new ServiceSpread();
  /**
   * Service time of the responses known not to be held: those never judged (refusals, errors), and
   * those that left a key's ring uncounted (a response is counted, if ever, while in its ring).
   */
  readonly #unheld = newHistogram();

  observe(a: AttemptRecord): void {
    if (a.kind === 'transport-error' || keepsAway(a.kind)) {
      this.#unheld.recordValue(serviceUs(a.sentAt, a.receivedAt));
      return;
    }
    let key = this.#keys.get(a.keyLabel);
    if (!key) {
      key = new KeyState();
      this.#keys.set(a.keyLabel, key);
    }
    const latency = a.receivedAt - a.sentAt;
    const hold = Math.max(0, latency - this.#baseline(key, a.operation.id, latency, a.status < 400));
    this.#spread.observe(hold);
    const at = (key.seen % WINDOW) * FIELDS;
    if (key.seen >= WINDOW && key.ring[at + COUNTED] === 0)
      this.#unheld.recordValue(serviceUs(key.ring[at + SENT]!, key.ring[at + RECEIVED]!));
    key.ring[at + SENT] = a.sentAt;
    key.ring[at + RECEIVED] = a.receivedAt;
    key.ring[at + HOLD] = hold;
    key.ring[at + COUNTED] = 0;
    key.seen++;
    if (key.seen < WINDOW) return;
    if (this.#judgeWindow(key)) return;
    this.#continueRun(key);
  }

  /** The operation's service latency, `latency` (of a success when `ok`) taken in. */
  #baseline(key: KeyState, operation: string, latency: number, ok: boolean): number {
    const any = Math.min(key.anyBaseline.get(operation) ?? latency, latency);
    key.anyBaseline.set(operation, any);
    const fastestOk = key.baseline.get(operation);
    if (!ok) return fastestOk ?? any;
    const fastest = Math.min(fastestOk ?? latency, latency);
    key.baseline.set(operation, fastest);
    return fastest;
  }

  /** Whether the last WINDOW answers show a queue or a slow-down; counts their held answers if so. */
  #judgeWindow(key: KeyState): boolean {
    const gap = this.#steady(key, RECEIVED);
    const step = this.#steady(key, HOLD);
    const baseline = this.#slowestBaseline(key);
    // The service's own queue spaces answers by its own latency; a limiter's by its rate.
    const queue = gap >= Math.max(UNIT_FLOOR_MS, 2 * baseline);
    // A step must stand clear of its own noise band: one under twice the hold's floor is jitter's.
    const slowDown = step >= Math.max(UNIT_FLOOR_MS, 2 * HOLD_TOLERANCE_FLOOR_MS);
    if (!queue && !slowDown) return false;
    let verdict: Verdict = queue && slowDown ? Verdict.Either : queue ? Verdict.Queue : Verdict.SlowDown;
    let unit = verdict === Verdict.SlowDown ? step : gap;
    // A slow-down at its cap holds every answer alike, which users sending again at once turn into
    // answers at a steady interval: a queue's look, at the very hold the slow-down stopped growing at.
    if (verdict !== Verdict.SlowDown && this.#atCap(key)) {
      verdict = Verdict.SlowDown;
      unit = key.slowStep;
    } else if (verdict === Verdict.Queue && this.#cappedClimb(key, gap)) {
      verdict = Verdict.SlowDown;
      unit = key.climbStep;
    }
    // Steady gaps alone are what sends at a steady rate give a quick service: half the window must
    // also have waited beyond the service's own spread, or its timing is the sends', not a limiter's.
    if (this.#heldBeyond(key, unit) < WINDOW / 2) return false;
    if (verdict === Verdict.Either) {
      key.climbGap = gap;
      key.climbStep = step;
    }
    for (let i = 0; i < WINDOW; i++)
      this.#count(key, ((key.seen - WINDOW + i) % WINDOW) * FIELDS, verdict, unit);
    key.lastVerdict = verdict;
    key.lastUnit = unit;
    return true;
  }

  /**
   * An answer that breaks the window yet continues the last run (one late wake-up of the event
   * loop, a slow-down at its cap): released one interval after the last, or held one step more (or
   * as much, at the cap) than it.
   */
  #continueRun(key: KeyState): void {
    if (key.lastVerdict === Verdict.None) return;
    const at = ((key.seen - 1) % WINDOW) * FIELDS;
    const before = ((key.seen - 2) % WINDOW) * FIELDS;
    const unit = key.lastUnit;
    const tol = tolerance(
      unit,
      key.lastVerdict === Verdict.SlowDown ? HOLD_TOLERANCE_FLOOR_MS : TOLERANCE_FLOOR_MS,
    );
    const ring = key.ring;
    const fits =
      key.lastVerdict === Verdict.SlowDown
        ? ring[before + COUNTED] === 1 &&
          (Math.abs(ring[at + HOLD]! - ring[before + HOLD]! - unit) <= tol ||
            Math.abs(ring[at + HOLD]! - ring[before + HOLD]!) <= tol)
        : Math.abs(ring[at + RECEIVED]! - ring[before + RECEIVED]! - unit) <= tol;
    if (fits) this.#count(key, at, key.lastVerdict, unit);
    else key.lastVerdict = Verdict.None;
  }

  #count(key: KeyState, at: number, verdict: Verdict, unit: number): void {
    const ring = key.ring;
    const hold = ring[at + HOLD]!;
    if (ring[at + COUNTED] === 1 || hold < this.#heldFrom(unit)) return;
    ring[at + COUNTED] = 1;
    this.#totalMs += hold;
    if (hold > this.#longestMs) this.#longestMs = hold;
    if (verdict === Verdict.Queue) {
      key.queued++;
      key.intervalWeighted += unit;
    } else if (verdict === Verdict.SlowDown) {
      key.slowed++;
      key.stepWeighted += unit;
      key.slowStep = unit;
      key.slowCap = Math.max(key.slowCap, hold);
    } else key.either++;
  }

  /** The least hold that counts as held: half a limiter's unit, and clear of the service's spread. */
  #heldFrom(unit: number): number {
    return Math.max(unit / 2, this.#spread.marginMs);
  }

  /** The window's answers held at least `#heldFrom(unit)`. */
  #heldBeyond(key: KeyState, unit: number): number {
    const from = this.#heldFrom(unit);
    let held = 0;
    for (let at = 0; at < WINDOW * FIELDS; at += FIELDS) if (key.ring[at + HOLD]! >= from) held++;
    return held;
  }

  /**
   * Every answer of the window not counted yet was held as long as the key's last slow-down held
   * any, within half a step: nearer to it than to the step below (those counted are its climb).
   */
  #atCap(key: KeyState): boolean {
    if (key.slowStep === 0) return false;
    const tol = key.slowStep / 2;
    const ring = key.ring;
    for (let at = 0; at < WINDOW * FIELDS; at += FIELDS)
      if (ring[at + COUNTED] === 0 && Math.abs(ring[at + HOLD]! - key.slowCap) > tol) return false;
    return true;
  }

  /**
   * Sends at a steady interval S climb alike into a queue (released every T: steps T - S) and into
   * a slow-down (steps D: answers every S + D). Where the climb stops they part: a queue still
   * releases every T, the climb's gap; a slow-down at its cap answers as the sends come, every S,
   * the climb's gap less its step.
   */
  #cappedClimb(key: KeyState, gap: number): boolean {
    if (key.climbStep === 0) return false;
    const tol = tolerance(gap);
    return (
      Math.abs(gap - (key.climbGap - key.climbStep)) <= tol &&
      Math.abs(gap - key.climbGap) > tolerance(key.climbGap)
    );
  }

  /** The window's largest service latency (its answers' fastest, per operation), ms. */
  #slowestBaseline(key: KeyState): number {
    const ring = key.ring;
    let slowest = 0;
    for (let at = 0; at < WINDOW * FIELDS; at += FIELDS)
      slowest = Math.max(slowest, ring[at + RECEIVED]! - ring[at + SENT]! - ring[at + HOLD]!);
    return slowest;
  }

  /**
   * The median difference of `field` between consecutive answers of the window, when it is above 0
   * and every difference is within tolerance of it; else 0. Gaps are taken in the order answered (a
   * queue's clock); holds in the order sent (a slow-down's count), so that answers still held from
   * before its window reset do not break the steps of those after.
   */
  #steady(key: KeyState, field: number): number {
    const diffs = this.#scratch;
    const ring = key.ring;
    const order = this.#order;
    const first = key.seen - WINDOW;
    for (let i = 0; i < WINDOW; i++) order[i] = ((first + i) % WINDOW) * FIELDS;
    if (field === HOLD) sortBySent(order, ring);
    for (let i = 1; i < WINDOW; i++) diffs[i - 1] = ring[order[i]! + field]! - ring[order[i - 1]! + field]!;
    diffs.sort();
    const median = diffs[(WINDOW - 1) >> 1]!;
    if (median <= 0) return 0;
    const tol = tolerance(median, field === HOLD ? HOLD_TOLERANCE_FLOOR_MS : TOLERANCE_FLOOR_MS);
    return diffs[0]! >= median - tol && diffs[WINDOW - 2]! <= median + tol ? median : 0;
  }

  /** The unheld histogram with the answers still in the rings and not counted (a copy: runs go on). */
  #unheldSoFar(): Histogram {
    const unheld = newHistogram();
    unheld.add(this.#unheld);
    for (const key of this.#keys.values()) {
      const ring = key.ring;
      for (let i = Math.max(0, key.seen - WINDOW); i < key.seen; i++) {
        const at = (i % WINDOW) * FIELDS;
        if (ring[at + COUNTED] === 0) unheld.recordValue(serviceUs(ring[at + SENT]!, ring[at + RECEIVED]!));
      }
    }
    return unheld;
  }

  /** Undefined when nothing was held. */
  snapshot(): HeldSnapshot | undefined {
    let responses = 0;
    let queued = 0;
    let slowed = 0;
    let intervalWeighted = 0;
    let stepWeighted = 0;
    for (const key of this.#keys.values()) {
      responses += key.queued + key.slowed + key.either;
      // A window of no kind (a burst sent at once) is of the kind its key showed most, if any.
      const toQueue = key.queued >= key.slowed && key.queued > 0 ? key.either : 0;
      const toSlowed = key.slowed > key.queued ? key.either : 0;
      queued += key.queued + toQueue;
      slowed += key.slowed + toSlowed;
      intervalWeighted += key.queued > 0 ? key.intervalWeighted * ((key.queued + toQueue) / key.queued) : 0;
      stepWeighted += key.slowed > 0 ? key.stepWeighted * ((key.slowed + toSlowed) / key.slowed) : 0;
    }
    if (responses === 0) return undefined;
    return {
      unheld: this.#unheldSoFar(),
      responses,
      totalMs: Math.round(this.#totalMs),
      longestMs: Math.round(this.#longestMs),
      kind: heldKind(queued, slowed),
      queued,
      slowed,
      ...(queued > 0 ? { intervalMs: Math.round((intervalWeighted / queued) * 10) / 10 } : {}),
      ...(slowed > 0 ? { stepMs: Math.round((stepWeighted / slowed) * 10) / 10 } : {}),
    };
  }
}
