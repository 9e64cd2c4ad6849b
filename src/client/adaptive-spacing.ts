import { ConcurrencyLimit } from './concurrency-limit.ts';

/**
 * The spacing a key's sends keep when the server's limiter is not the plan's windows: a GCRA or
 * leaky bucket (nginx `limit_req`, Envoy, most gateways) rejects any request that comes sooner than
 * 1/rate after the one before, whatever a window would allow, and a limiter that says nothing of its
 * quota can only be learned from its 429s. Two gaps, between one send and the next:
 *
 * - the floor: the gap a 429 proved too short, plus a margin (2% and 5 ms: a busy machine and a
 *   server's millisecond clock move an arrival by a few ms), in paced mode at least the plan's spacing. It
 *   only grows, and only when a 429 comes at a gap no shorter than it: a limiter that rejected a gap
 *   rejects any shorter one.
 * - the cap (AIMD, as TCP's congestion window): a 429 that told no wait, and was not one alone at
 *   about the plan's spacing, halves the key's rate; every answer that is not a 429 adds back a tenth of the rate it was
 *   halved to, so a headerless limiter sees a few 429s, never a storm, and a passing one costs
 *   seconds, not the run.
 *
 * A gap is measured between send times, not on a grid: a timer that fired late must not be made up
 * for by the next send, which is exactly the pair a GCRA without burst rejects.
 */

/**
 * What is known of the server's limiter before its first answer: `floorMs`, a gap to keep from the
 * start (a GCRA or token bucket given with `--limiter`: the plan's spacing); `learnFloor`, whether
 * a 429 may raise it (not when the limiter is given as windows); `maxInFlight`, a concurrency limit
 * given (`--limiter concurrency:N`); `learnConcurrency`, whether a 429 that came while others of the
 * key were in flight may lower the key's in-flight cap (untold, or told `concurrency`).
 */
export interface SpacingStart {
  floorMs: number;
  learnFloor: boolean;
  maxInFlight?: number;
  learnConcurrency?: boolean;
}

/** What the spacing learned, for the result: the model it points to and the gaps it keeps. */
export interface SpacingState {
  /** `gcra`: a 429 came while the plan's windows had room (a rate limit between sends). */
  inferred: 'gcra' | undefined;
  floorMs: number;
  capMs: number;
  /** 429s that told no wait, each of which halved the rate. */
  decreases: number;
  /** The key's in-flight cap, given, told or learned (undefined: none binds). */
  maxInFlight: number | undefined;
  /** 429s that lowered the in-flight cap. */
  concurrencyCuts: number;
}

/**
 * A gap a 429 proved too short, with a margin for the arrival jitter of a busy machine: 2%, and up
 * to 5 ms more (at most 4% of a short gap). 1 s becomes 1025 ms: 97.6% of the rate kept.
 */
export const withMargin = (gapMs: number): number => gapMs * 1.02 + Math.min(5, gapMs * 0.04);
/** Of the rate a 429 halved to, what each answer adds back (10 answers to double again). */
const RECOVERY = 0.1;
/** Up to this multiple of the plan's spacing, a lone 429 is taken for arrival jitter. */
const JITTER_BAND = 1.25;
const EMPTY: number[] = [];
/** Sends unanswered whose time is kept, at most, to measure the gap a late answer's send came at. */
const RING = 256;
/**
 * A slot of the ring: the send's number (FREE: none), its time, the gap before it, and its level
 * (the key's requests in flight as it left, itself included).
 */
const STRIDE = 4;
const FREE = -1;

/** Whether an unanswered send other than `seq` would share its slot in a ring of `slots`. */
function clashes(ring: readonly number[], seq: number, slots: number): boolean {
  for (let i = 0; i < ring.length; i += STRIDE) {
    const s = ring[i] as number;
    if (s !== FREE && s !== seq && s % slots === seq % slots) return true;
  }
  return false;
}

/**
 * What a key learned from its 429s. Made at the first (or at once, for a floor given in advance): a
 * key of a tenant mix that never meets a 429 keeps none of it.
 */
class Learned {
  /** 0: no cap. */
  capMs = 0;
  recoveryPerAnswer = 0;
  decreases = 0;
  inferred: SpacingState['inferred'];
  /** 429s in a row for this key, whatever their headers: the exponent of its backoff. */
  consecutive = 0;
  /** When the latest 429 was received: only a send after it can end a run of 429s. */
  last429At = Number.NEGATIVE_INFINITY;
  public floorMs: number;

  constructor(floorMs: number) {
    this.floorMs = floorMs;
  }
}

const NO_CAP = Number.POSITIVE_INFINITY;

export class AdaptiveSpacing {
  private learned: Learned | undefined;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  /** The send before the latest, to measure the gap each send leaves at as it leaves. */
  private prevSeq = 0;
  private prevAt = Number.NaN;
  /**
   * Sends not yet answered, by number modulo its size: STRIDE numbers a slot. It starts at one slot
   * and doubles (up to RING) only when a send would take the slot of one still unanswered, so that a
   * key with a request or two in flight keeps a few dozen bytes, not RING's 6 KB; at RING the oldest
   * is forgotten, as a fixed ring of RING sends would.
   */
  private ring: number[] = EMPTY;

  /** Made at the first 429 that a concurrency limit explains, or at once for a cap given. */
  private concurrency: ConcurrencyLimit | undefined;
  private readonly start: SpacingStart;

  /** `start` may be shared by every key of a plan: it is only read. */
  constructor(start: SpacingStart) {
    this.start = start;
    if (start.floorMs > 0) this.learned = new Learned(start.floorMs);
    if (start.maxInFlight !== undefined) this.concurrency = new ConcurrencyLimit(start.maxInFlight);
  }

  /** Requests of the key in flight at most (Infinity: no cap binds). */
  maxInFlight(): number {
    return this.concurrency === undefined ? NO_CAP : this.concurrency.cap;
  }

  /** The server told its concurrency limit (a policy counted in concurrent requests). */
  toldMaxInFlight(limit: number): void {
    if (this.concurrency === undefined) this.concurrency = new ConcurrencyLimit(limit);
    else this.concurrency.told(limit);
  }

  /** 429s in a row for this key, whatever their headers: the exponent of its backoff. */
  get consecutive(): number {
    return this.learned === undefined ? 0 : this.learned.consecutive;
  }

  /** Earliest time the next send may leave (-Infinity when no gap binds). */
  earliest(): number {
    const learned = this.learned;
    if (learned === undefined) return Number.NEGATIVE_INFINITY;
    const gap = Math.max(learned.floorMs, learned.capMs);
    return gap > 0 ? this.lastSentAt + gap : Number.NEGATIVE_INFINITY;
  }

  sent(seq: number, at: number, level = 1): void {
    const gap = seq > 1 && this.prevSeq === seq - 1 ? at - this.prevAt : Number.NaN;
    this.prevSeq = seq;
    this.prevAt = at;
    if (at > this.lastSentAt) this.lastSentAt = at;
    let ring = this.ring;
    let slot = this.slotOf(seq);
    const held = ring[slot] as number;
    if (ring.length === 0 || (held !== FREE && held !== seq && ring.length < RING * STRIDE)) {
      ring = this.grow(seq);
      slot = this.slotOf(seq);
    }
    ring[slot] = seq;
    ring[slot + 1] = at;
    ring[slot + 2] = gap;
    ring[slot + 3] = level;
  }

  private slotOf(seq: number): number {
    return (seq % (this.ring.length / STRIDE)) * STRIDE;
  }

  /** Doubles the ring until `seq` has a free slot (or RING is reached); the unanswered keep theirs. */
  private grow(seq: number): number[] {
    const old = this.ring;
    let slots = old.length / STRIDE;
    do slots = slots === 0 ? 1 : slots * 2;
    while (slots < RING && clashes(old, seq, slots));
    const ring = new Array<number>(slots * STRIDE).fill(FREE);
    for (let i = 0; i < old.length; i += STRIDE) {
      const s = old[i] as number;
      if (s === FREE) continue;
      const at = (s % slots) * STRIDE;
      for (let k = 0; k < STRIDE; k++) ring[at + k] = old[i + k] as number;
    }
    this.ring = ring;
    return ring;
  }

  /** Where send `seq` is kept, or -1 when it is not (never sent, forgotten, or answered). */
  private find(seq: number): number {
    if (this.ring.length === 0) return -1;
    const slot = this.slotOf(seq);
    return this.ring[slot] === seq ? slot : -1;
  }

  /** The gap send `seq` left at after the send before it (undefined when no longer known). */
  private gapBefore(slot: number): number | undefined {
    const gap = slot < 0 ? Number.NaN : (this.ring[slot + 2] as number);
    return Number.isFinite(gap) && gap >= 0 ? gap : undefined;
  }

  /** Send `seq` answered (or given up): its slot is free for a later send. */
  forget(seq: number): void {
    const slot = this.find(seq);
    if (slot >= 0) this.ring[slot] = FREE;
  }

  /**
   * A 429 to send `seq`. `told`: the server said when to come back (Retry-After or a reset), which
   * the pause honours; the rate is cut only when it did not. `planGapMs`: the plan's spacing when
   * pacing keeps it (0 in raw mode): the send kept the plan's windows, so what rejected it limits the
   * spacing, and a gap the plan itself asked for was too short. `intervalMs`: the plan's window over
   * its limit, in either mode: a gap well past it (a send after a pause, or after a spent window's
   * wait) was refused by a quota, not for coming too soon, and teaches the floor nothing.
   */
  rateLimited(
    seq: number,
    told: boolean,
    planGapMs: number,
    intervalMs: number,
    at: number,
    quotaLeft = false,
  ): void {
    if (this.learned === undefined) this.learned = new Learned(this.start.floorMs);
    const l = this.learned;
    l.consecutive++;
    l.last429At = Math.max(l.last429At, at);
    const slot = this.find(seq);
    const gap = this.gapBefore(slot);
    const level = slot < 0 ? 0 : (this.ring[slot + 3] as number);
    if (slot >= 0) this.ring[slot] = FREE;
    // What the 429 correlates with: others of the key in flight (a concurrency limit), or none, so
    // only a rate between sends or a window can have refused it. A told wait is a window's, unless
    // the same answer shows the window's quota not spent (GitHub's secondary limits tell a wait).
    const unexplained = (!told || quotaLeft) && this.start.learnConcurrency;
    if (unexplained && level >= 2) {
      if (this.concurrency === undefined) this.concurrency = new ConcurrencyLimit();
      this.concurrency.refused(level, at, gap ?? 0);
      return;
    }
    const soon = gap !== undefined && gap <= intervalMs * JITTER_BAND;
    if (this.start.learnFloor && soon && gap + 1 >= l.floorMs) {
      if (planGapMs > 0) l.inferred = 'gcra';
      l.floorMs = Math.max(l.floorMs, withMargin(Math.max(gap, planGapMs)));
    }
    // A request refused alone: a rate between sends (refused soon after the one before), whose floor
    // may explain the 429s that set the cap, or a window (refused well after it), which explains them all.
    if (unexplained && level === 1)
      this.concurrency?.refusedAlone(soon ? l.floorMs : Number.POSITIVE_INFINITY);
    // Told when to come back, or, pacing, one 429 alone at about the plan's spacing (a send a few ms
    // early by the server's clock, which the floor now keeps out): the rate itself was not too high.
    // 429s in a row, or at a gap well past the plan's, say it was.
    const nearPlan = gap !== undefined && gap < planGapMs * JITTER_BAND;
    if (told || (nearPlan && l.consecutive === 1)) return;
    const current = Math.max(l.capMs, l.floorMs, gap ?? 0, planGapMs);
    if (!(current > 0)) return;
    l.capMs = current * 2;
    l.recoveryPerAnswer = RECOVERY / l.capMs;
    l.decreases++;
  }

  /**
   * An answer to send `seq` that was not a 429: the cap's rate grows by a step (additive increase),
   * and, if it left after the latest 429 came, the run of 429s is over. One sent before says nothing
   * of the limiter after it (it was admitted while the others in flight were not).
   */
  answered(seq: number, at: number): void {
    this.concurrency?.answered(at);
    const slot = this.find(seq);
    if (slot < 0 && this.learned === undefined) return;
    const sentAt = slot < 0 ? Number.NaN : (this.ring[slot + 1] as number);
    if (slot >= 0) this.ring[slot] = FREE;
    const l = this.learned;
    if (l === undefined) return;
    if (sentAt > l.last429At) l.consecutive = 0;
    if (l.capMs === 0) return;
    const rate = 1 / l.capMs + l.recoveryPerAnswer;
    l.capMs = 1 / rate;
    // Below the floor the cap binds nothing any more.
    if (l.capMs <= l.floorMs || l.capMs < 1) l.capMs = 0;
  }

  state(): SpacingState {
    const l = this.learned;
    const c = this.concurrency;
    const concurrency = { maxInFlight: c?.maxInFlight, concurrencyCuts: c?.cuts ?? 0 };
    return l === undefined
      ? { inferred: undefined, floorMs: this.start.floorMs, capMs: 0, decreases: 0, ...concurrency }
      : { inferred: l.inferred, floorMs: l.floorMs, capMs: l.capMs, decreases: l.decreases, ...concurrency };
  }
}
