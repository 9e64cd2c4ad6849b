/** What names a hold: the fields of the answer that spent the key's budget, when one did. */
interface Told {
  toldFields(): string | undefined;
}

/**
 * A key's holds by the server's told budget (its Remaining spent, until its Reset), in wall time.
 * Made at a key's first such hold, so that a key of a tenant mix that is never held keeps one field
 * for it; touched only where a send waits, never per response.
 */
export class BudgetHold {
  /** Holds that ended, ms. */
  private endedMs = 0;
  /** The hold going on, [from, until): Infinity while it waits for an answer; open past the run's close. */
  private from = 0;
  private until = 0;
  /**
   * The fields of the answer that spent the budget, as the server sent them: named once a hold, when
   * it began or, where the budget was spent by sends whose answers had not come yet, once one came.
   */
  private toldText: string | undefined;
  private readonly pacer: Told;

  constructor(pacer: Told) {
    this.pacer = pacer;
  }

  /** Wall time held up to `at` (no later than now), ms. */
  heldMs(at: number): number {
    return this.endedMs + Math.max(0, Math.min(at, this.until) - this.from);
  }

  get told(): string | undefined {
    this.toldText ??= this.pacer.toldFields();
    return this.toldText;
  }

  /**
   * The budget holds the key from `t` until `until`. A hold that meets the one before (within
   * `joinMs`: a send let go between them) goes on with it, under the same words: a server that says
   * 0 on every answer is named once, not once a response.
   */
  begins(t: number, until: number, joinMs: number): void {
    if (t <= this.until + joinMs && this.until > this.from) {
      this.until = Math.max(this.until, until);
      return;
    }
    this.endedMs += this.until - this.from;
    this.from = t;
    this.until = until;
    this.toldText = this.pacer.toldFields();
  }

  /** The send looks again at `at`: the hold is over then, if no later look finds it on (an answer may lift it early). */
  ends(at: number): void {
    this.until = Math.min(this.until, at);
    // Its answer's words, where the sends that spent the budget had none before it.
    this.toldText ??= this.pacer.toldFields();
  }
}
