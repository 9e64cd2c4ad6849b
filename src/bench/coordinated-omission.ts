import type { Histogram } from '../record/histogram.ts';

/**
 * Coordinated-omission correction at a fixed rate: why HdrHistogram's `recordValueWithExpectedInterval`
 * and not the time from each request's intended send.
 *
 * autocannon's fixed rate (`overallRate`, split into a whole `rate` per connection) is a budget per
 * second of each connection's own timer: the connection sends as fast as answers come back until the
 * second's budget is spent, then waits for its next tick, which resets the budget. When answers are
 * slow, what is left of a second's budget is never sent; it is not sent late either. So there is no
 * late send to measure from: the requests a slow answer held back are skipped, which is coordinated
 * omission in its purest form (they would have met the slowness, and they are not in the data).
 * Measuring from intended send times would need a scheduler of our own instead of autocannon's (it
 * has no hook to delay a send) and would still not see the skipped requests.
 *
 * HdrHistogram's correction restores them: a response that took L on a connection meant to send every
 * I (1000 / its rate, ms) stands for the requests due while it was outstanding, each of which would
 * have waited L - I, L - 2I, ... down to I had it queued behind it; those values are recorded besides
 * L, in the response-time histograms only (service time stays what was measured, as in `run`). The
 * histogram then counts about rate x duration samples whatever the server did.
 *
 * autocannon's own correction passes `Math.ceil(1 / rate)` (seconds, rounded up to 1, read as 1 ms)
 * as the interval, so it back-fills one sample per millisecond of every response; `drive` turns it off
 * (`ignoreCoordinatedOmission`), which also saves that loop's CPU.
 */
export function backfillOmitted(histogram: Histogram, valueUs: number, intervalUs: number): void {
  if (!(intervalUs > 0)) return;
  for (let missing = valueUs - intervalUs; missing >= intervalUs; missing -= intervalUs)
    histogram.recordValue(missing);
}

/** Part `i` of `total` split over `parts` as autocannon splits a rate or an amount: the first ones get the remainder. */
export function shareOf(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i + 1 <= total % parts ? 1 : 0);
}
