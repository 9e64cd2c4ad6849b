/**
 * How many requests of one key may be in flight, when the server limits that rather than (or as
 * well as) a rate: nginx `limit_conn`, Stripe's concurrency limiter, GitHub's secondary limits. They
 * refuse a request that arrives while N of the key's are being served, however slowly they come.
 *
 * Learned from the 429s the way TCP and Netflix's concurrency-limits learn a window, additive
 * increase and multiplicative decrease, with one difference: a 429 tells its own level. A request
 * sent while k - 1 others of the key were in flight and refused says the limit is below k, so the
 * cap falls straight to k - 1 (the decrease is k - 1 over the k tried, not a fixed ratio that could
 * undershoot a limit of 10 to 5, or overshoot a limit of 2 to 3 and draw a second 429).
 *
 * Probing back up costs a 429 each time, and the seed's ban counts 429s; a concurrency limit is
 * usually configuration, not load, so the cap creeps back up by one only after a long run of
 * answers (a minute and RUN_ANSWERS answers at least since the last cut), and a probe that is
 * refused again doubles that spell (up to 10 minutes). A cap given with `--limiter concurrency:N`
 * or by a `RateLimit-Policy` whose unit is concurrent requests is never probed past.
 */

/** The spell after a cut before the cap is raised by one to probe the level refused. */
const PROBE_AFTER_MS = 60_000;
const PROBE_AFTER_MAX_MS = 600_000;
/** Answers at least, as well as the spell, before a probe: a key that barely sends learns nothing new. */
const RUN_ANSWERS = 64;

export class ConcurrencyLimit {
  /** In flight at most; Infinity until a 429 or the user told one. */
  cap: number;
  /** Times a 429 lowered the cap. */
  cuts = 0;
  private cutAt = Number.NEGATIVE_INFINITY;
  /** The longest gap after the send before that any 429 setting the cap came at. */
  private widestGapMs = 0;
  private answersSinceCut = 0;
  private probeAfterMs = PROBE_AFTER_MS;
  /** The cap was raised to a level once refused, and that level is being tried. */
  private probing = false;
  private ceiling;

  /** `ceiling`: a cap told (flag or policy), never probed past. */
  constructor(ceiling = Number.POSITIVE_INFINITY) {
    this.ceiling = ceiling;
    this.cap = ceiling;
  }

  /** A server told its limit (a policy in concurrent requests): it replaces what was learned. */
  told(limit: number): void {
    if (!(Number.isInteger(limit) && limit >= 1) || limit === this.ceiling) return;
    this.ceiling = limit;
    this.cap = limit;
    this.probing = false;
  }

  /**
   * A 429 to a request sent at `level` (itself included) that no window or spacing explains:
   * the limit is below `level`. A request sent at a level the cap already forbids (before the cap
   * was learned) teaches nothing more.
   */
  refused(level: number, at: number, gapMs = 0): void {
    const below = Math.max(1, level - 1);
    if (below >= this.cap) return;
    this.widestGapMs = Math.max(this.widestGapMs, gapMs);
    // The level a probe tried was refused again: wait twice as long before the next try.
    if (this.probing) this.probeAfterMs = Math.min(PROBE_AFTER_MAX_MS, this.probeAfterMs * 2);
    this.cap = below;
    this.cuts++;
    this.cutAt = at;
    this.answersSinceCut = 0;
    this.probing = false;
  }

  /**
   * A request refused while none other of the key was in flight: no concurrency limit explains it,
   * but another limiter does, and it may have sent the 429s that set the cap too: every one that
   * came sooner than `explainsBelowMs` after the send before (a rate between sends whose gap is now
   * known; Infinity for a window, which refuses whatever the gap). Then the cap is dropped; a told
   * cap stays, and so does one whose 429s came at gaps the other limiter admits.
   */
  refusedAlone(explainsBelowMs: number): void {
    if (this.ceiling !== Number.POSITIVE_INFINITY || this.widestGapMs >= explainsBelowMs) return;
    this.cap = Number.POSITIVE_INFINITY;
    this.widestGapMs = 0;
    this.probing = false;
  }

  /** An answer that was not a 429: after a long enough run of them, one more is tried in flight. */
  answered(at: number): void {
    if (this.cap === Number.POSITIVE_INFINITY || this.cap >= this.ceiling) return;
    this.answersSinceCut++;
    if (this.answersSinceCut < RUN_ANSWERS || at - this.cutAt < this.probeAfterMs) return;
    // A probe that held for a whole spell proved the level: the next probe comes as soon.
    if (this.probing) this.probeAfterMs = PROBE_AFTER_MS;
    this.cap++;
    this.probing = true;
    this.cutAt = at;
    this.answersSinceCut = 0;
  }

  /** The cap as the result tells it: undefined when none binds. */
  get maxInFlight(): number | undefined {
    return this.cap === Number.POSITIVE_INFINITY ? undefined : this.cap;
  }
}
