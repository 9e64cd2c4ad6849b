/**
 * Retries of 5xx and transport errors may be at most `ratio` of all requests (plus a few to start
 * with), so that a failing server is not hit with a retry storm on top of the load.
 */
export class RetryBudget {
  private requests = 0;
  private retries = 0;
  readonly ratio;
  readonly minimum;

  constructor(ratio = 0.1, minimum = 10) {
    this.ratio = ratio;
    this.minimum = minimum;
  }
  request(): void {
    this.requests++;
  }
  /** Takes one retry from the budget; false if spent. */
  tryRetry(): boolean {
    if (this.retries >= Math.max(this.minimum, this.requests * this.ratio)) return false;
    this.retries++;
    return true;
  }
}
