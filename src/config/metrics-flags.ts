import type { Options } from 'yargs';

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
    describe: 'How often --metrics pushes (default 5s)',
  },
} as const satisfies Record<string, Options>;
