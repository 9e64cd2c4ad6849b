/**
 * Iterations and virtual users under way, counted. A set of their promises, each removed by its own
 * `finally`, cost two promise chains and their callbacks per iteration: at thousands a second, a
 * measurable share of what the generator spends on a request.
 */
export class InFlight {
  size = 0;
  private waiters: (() => void)[] = [];
  /** A function made once, that a tracked promise calls when it settles. */
  readonly leave = (): void => {
    if (--this.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  };

  enter(): void {
    this.size++;
  }

  /** Resolves once nothing is under way. */
  settled(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
