import type { Argv } from 'yargs';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { METRICS_FLAGS } from '../config/metrics-flags.ts';
import type { LiveMetrics } from './live-metrics.ts';
import { parseMetricsFlags, type SinkSpec } from './sinks.ts';

export const DEFAULT_METRICS_INTERVAL_MS = 5000;
/** A run ends within this of its end while its sinks send what they hold... */
const STOP_DEADLINE_MS = 3000;
/** ...and within this after Ctrl-C, which promises the process ends within 2 s of the signal. */
const INTERRUPTED_STOP_DEADLINE_MS = 500;

/** `--metrics` and `--metrics-interval` as `capacity` and `bench` take them (`run` has them in RUN_FLAGS). */
export function metricsOptions<T>(yargs: Argv<T>) {
  return yargs.options(METRICS_FLAGS);
}

/** `--metrics` and `--metrics-interval`, checked before any traffic; undefined without `--metrics`. */
export function metricsFlags(args: {
  metrics?: string[] | undefined;
  metricsInterval?: string | undefined;
  workers: number;
}): { sinks: SinkSpec[]; intervalMs: number } | undefined {
  const sinks = parseMetricsFlags(args.metrics ?? []);
  if (sinks.length === 0) {
    if (args.metricsInterval !== undefined) throw new InputError('--metrics-interval needs --metrics');
    return undefined;
  }
  const intervalMs =
    args.metricsInterval === undefined
      ? DEFAULT_METRICS_INTERVAL_MS
      : parseDuration(args.metricsInterval, '--metrics-interval');
  if (intervalMs < 100) throw new InputError('--metrics-interval must be at least 100ms');
  // Worker threads each hold a recorder of their own, which this generator's thread cannot read.
  if (args.workers > 1)
    throw new InputError(
      '--metrics pushes the figures of one generator: it cannot be used with --workers yet (use --shard in separate processes)',
    );
  return { sinks, intervalMs };
}

/**
 * Ends the push and says where the metrics went, on stderr (quiet or not when samples were dropped).
 * Never throws and never changes the exit code.
 */
export async function stopMetrics(
  metrics: LiveMetrics | undefined,
  o: { interrupted: boolean; quiet: boolean },
): Promise<void> {
  if (!metrics) return;
  try {
    const lines = await metrics.stop(o.interrupted ? INTERRUPTED_STOP_DEADLINE_MS : STOP_DEADLINE_MS);
    for (const line of lines)
      if (!o.quiet || line.dropped > 0) process.stderr.write(`petstore-load: ${line.text}\n`);
  } catch (error) {
    process.stderr.write(`petstore-load: metrics: not sent (${(error as Error).message})\n`);
  }
}
