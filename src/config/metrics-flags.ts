import type { Options } from 'yargs';
import { DEFAULT_METRICS_INTERVAL_MS, DEFAULTS } from '../api/defaults.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { parseMetricsFlags, type SinkSpec } from '../metrics/sinks.ts';

/** `--metrics` and `--metrics-interval`, as `run`, `capacity` and `bench` all take them. */
export const METRICS_FLAGS = {
  metrics: {
    type: 'string',
    array: true,
    requiresArg: true,
    describe:
      'Push live metrics while it runs, repeatable: prometheus=URL (remote write, e.g. http://127.0.0.1:9090/api/v1/write; user:password@ in the URL is sent as basic auth, never shown)',
  },
  'metrics-interval': {
    type: 'string',
    requiresArg: true,
    describe: `How often --metrics pushes (default ${DEFAULTS.metricsInterval})`,
  },
} as const satisfies Record<string, Options>;

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
