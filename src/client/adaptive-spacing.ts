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
 * a 429 may raise it (not when the limiter is given as windows).
 */
export interface SpacingStart {
  floorMs: number;
  learnFloor: boolean;
}

/** What the spacing learned, for the result: the model it points to and the gaps it keeps. */
export interface SpacingState {
  /** `gcra`: a 429 came while the plan's windows had room (a rate limit between sends). */
  inferred: 'gcra' | undefined;
  floorMs: number;
  capMs: number;
  /** 429s that told no wait, each of which halved the rate. */
  decreases: number;
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
/** Sends whose time is kept, to measure the gap a late answer's send came at. */
const RING = 256;

export class AdaptiveSpacing {
  private floorMs: number;
  /** 0: no cap. */
  private capMs = 0;
  private recoveryPerAnswer = 0;
  private decreases = 0;
  private inferred: SpacingState['inferred'];
  private readonly learnFloor: boolean;
  /** 429s in a row for this key, whatever their headers: the exponent of its backoff. */
  consecutive = 0;
  /** When the latest 429 was received: only a send after it can end a run of 429s. */
  private last429At = Number.NEGATIVE_INFINITY;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private readonly sentAt = new Float64Array(RING).fill(Number.NaN);

  constructor(start: SpacingStart) {
    this.floorMs = start.floorMs;
    this.learnFloor = start.learnFloor;
  }

  /** Earliest time the next send may leave (-Infinity when no gap binds). */
  earliest(): number {
    const gap = Math.max(this.floorMs, this.capMs);
    return gap > 0 ? this.lastSentAt + gap : Number.NEGATIVE_INFINITY;
  }

  sent(seq: number, at: number): void {
    this.sentAt[seq % RING] = at;
    if (at > this.lastSentAt) this.lastSentAt = at;
  }

  /** The gap send `seq` left at after the send before it (undefined when no longer known). */
  private gapBefore(seq: number): number | undefined {
    const at = this.sentAt[seq % RING] as number;
    const before = this.sentAt[(seq - 1) % RING] as number;
    const gap = at - before;
    return seq > 1 && Number.isFinite(gap) && gap >= 0 ? gap : undefined;
  }

  /**
   * A 429 to send `seq`. `told`: the server said when to come back (Retry-After or a reset), which
   * the pause honours; the rate is cut only when it did not. `planGapMs`: the plan's spacing when
   * pacing keeps it (0 in raw mode): the send kept the plan's windows, so what rejected it limits the
   * spacing, and a gap the plan itself asked for was too short. `intervalMs`: the plan's window over
   * its limit, in either mode: a gap well past it (a send after a pause, or after a spent window's
   * wait) was refused by a quota, not for coming too soon, and teaches the floor nothing.
   */
  rateLimited(seq: number, told: boolean, planGapMs: number, intervalMs: number, at: number): void {
    this.consecutive++;
    this.last429At = Math.max(this.last429At, at);
    const gap = this.gapBefore(seq);
    const soon = gap !== undefined && gap <= intervalMs * JITTER_BAND;
    if (this.learnFloor && soon && gap + 1 >= this.floorMs) {
      if (planGapMs > 0) this.inferred = 'gcra';
      this.floorMs = Math.max(this.floorMs, withMargin(Math.max(gap, planGapMs)));
    }
    // Told when to come back, or, pacing, one 429 alone at about the plan's spacing (a send a few ms
    // early by the server's clock, which the floor now keeps out): the rate itself was not too high.
    // 429s in a row, or at a gap well past the plan's, say it was.
    const nearPlan = gap !== undefined && gap < planGapMs * JITTER_BAND;
    if (told || (nearPlan && this.consecutive === 1)) return;
    const current = Math.max(this.capMs, this.floorMs, gap ?? 0, planGapMs);
    if (!(current > 0)) return;
    this.capMs = current * 2;
    this.recoveryPerAnswer = RECOVERY / this.capMs;
    this.decreases++;
  }

  /**
   * An answer to send `seq` that was not a 429: the cap's rate grows by a step (additive increase),
   * and, if it left after the latest 429 came, the run of 429s is over. One sent before says nothing
   * of the limiter after it (it was admitted while the others in flight were not).
   */
  answered(seq: number): void {
    if ((this.sentAt[seq % RING] as number) > this.last429At) this.consecutive = 0;
    if (this.capMs === 0) return;
    const rate = 1 / this.capMs + this.recoveryPerAnswer;
    this.capMs = 1 / rate;
    // Below the floor the cap binds nothing any more.
    if (this.capMs <= this.floorMs || this.capMs < 1) this.capMs = 0;
  }

  state(): SpacingState {
    return { inferred: this.inferred, floorMs: this.floorMs, capMs: this.capMs, decreases: this.decreases };
  }
}
