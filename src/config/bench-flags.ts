import type { Options } from 'yargs';
import { DEFAULT_OPERATIONS } from '../bench/operation-mix.ts';
import { METRICS_FLAGS } from './metrics-flags.ts';
import { NETWORK_FLAGS } from './network-flags.ts';
import { REFUSAL_FLAGS } from './refusal-flags.ts';

/** `bench`'s options as data: src/config/bench.ts resolves what they say into one BenchConfig. */
export const BENCH_FLAGS = {
  operations: {
    type: 'string',
    default: DEFAULT_OPERATIONS,
    requiresArg: true,
    describe: 'Operations of the table to send, each with an optional weight: getPetById,listPets:3',
  },
  duration: { type: 'string', default: '10s', requiresArg: true, describe: 'How long, e.g. 10s, 2m' },
  connections: { type: 'number', default: 10, requiresArg: true, describe: 'Concurrent connections' },
  pipelining: {
    type: 'number',
    default: 1,
    requiresArg: true,
    describe: 'Requests in flight per connection',
  },
  rate: {
    type: 'string',
    requiresArg: true,
    describe:
      'Fixed rate, requests per second over all connections (default: as fast as the target answers); latency is corrected for coordinated omission',
  },
  workers: {
    type: 'number',
    default: 1,
    requiresArg: true,
    describe: 'Worker threads, each driving its share',
  },
  'base-url': {
    type: 'string',
    requiresArg: true,
    describe: 'Target; without it the reference server is started on 127.0.0.1 with an unlimited key',
  },
  'api-key': {
    type: 'string',
    requiresArg: true,
    describe:
      'API key (or env PETSTORE_API_KEY with --base-url); never printed or written. Wants an unlimited or enterprise plan',
  },
  'auth-header': {
    type: 'string',
    requiresArg: true,
    describe: 'Send the key in this header, as-is (default: Authorization: Bearer KEY)',
  },
  threshold: {
    type: 'string',
    array: true,
    requiresArg: true,
    describe:
      "Pass/fail criterion, repeatable, as for run: 'p99<50ms', 'rps>=5000', 'errors<0.1%', 'rate_limited==0'",
  },
  out: {
    type: 'string',
    requiresArg: true,
    describe: 'Directory for result.json and report.html (default reports/bench-<time>/)',
  },
  quiet: { type: 'boolean', default: false, describe: 'No status line and no summary: only the result path' },
  ...METRICS_FLAGS,
  ...NETWORK_FLAGS,
  ...REFUSAL_FLAGS,
  'print-config': {
    type: 'boolean',
    default: false,
    describe:
      'Print the resolved configuration as JSON (the key as where it came from) and exit: nothing is sent',
  },
} as const satisfies Record<string, Options>;
