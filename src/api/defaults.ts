import { parseDuration } from './duration.ts';

/**
 * The defaults that more than one command or layer applies, in one place: the flag tables show
 * them in `--help` and pass them to yargs, and the code that runs without a flag (a library caller,
 * a worker thread, a test) falls back on the same figure, so that the two cannot drift apart.
 */
export const DEFAULTS = {
  /** A request's timeout, `run`'s, `capacity`'s and `bench`'s (autocannon's own default is the same). */
  timeout: '10s',
  /** Attempts for 5xx and transport errors (idempotent methods only). */
  maxAttempts: 3,
  /** The full-jitter backoff of those retries: the first wait's ceiling, doubling up to the cap. */
  backoffBaseMs: 100,
  backoffCapMs: 10_000,
  /** How often `run` writes the result so far beside result.json. */
  checkpointInterval: '10s',
  /** How often `--metrics` pushes. */
  metricsInterval: '5s',
  /**
   * The embedded server's time scale for `run` and `capacity`'s plan probes: a minute window lasts
   * 6 s, so a default run crosses several windows in seconds and the four plans are probed in about
   * half a minute, while a shared, loaded machine keeps the Pro and Business rates (300 and 1000 a
   * second) on schedule. In shorter windows a late timer is a large share of the window: a paced
   * window falls behind and draws a 429 the plan did not owe.
   */
  embeddedTimeScale: 10,
} as const;

export const DEFAULT_TIMEOUT_MS = parseDuration(DEFAULTS.timeout);
export const DEFAULT_METRICS_INTERVAL_MS = parseDuration(DEFAULTS.metricsInterval);
