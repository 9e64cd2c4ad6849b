import type { InferredOptionTypes, Options } from 'yargs';
import { DEFAULTS } from '../api/defaults.ts';
import { METRICS_FLAGS } from './metrics-flags.ts';
import { NETWORK_FLAGS } from './network-flags.ts';
import { REFUSAL_FLAGS } from './refusal-flags.ts';

/**
 * `capacity`'s own defaults, which the flags' help names and `resolveCapacityConfig` applies (those
 * it shares with other commands are in src/api/defaults.ts).
 */
export const CAPACITY_DEFAULTS = {
  /** Requests per second one key is driven at, at most; above it the embedded server runs slower for that plan. */
  maxRate: 500,
  tenantThreshold: 'p99<300ms',
  stepDuration: '5s',
  maxTenants: 10_000,
} as const;

/** `capacity`'s flags (and its `--tenants` ramp's) as data. */
export const CAPACITY_FLAGS = {
  'base-url': {
    type: 'string',
    requiresArg: true,
    describe: 'Target; without it the reference server is started',
  },
  'api-key': {
    type: 'string',
    array: true,
    requiresArg: true,
    describe:
      "PLAN=KEY, repeatable: the API key each plan is probed with, as run's --api-key but one per plan (default with the embedded server: its demo key for every plan)",
  },
  'auth-header': {
    type: 'string',
    requiresArg: true,
    describe: 'Send the key in this header (as-is; Authorization keeps Bearer), over what the document says',
  },
  spec: {
    type: 'string',
    requiresArg: true,
    describe:
      "OpenAPI document of your own API (with --base-url): probe one of its operations instead of the pet store's listPets",
  },
  operation: {
    type: 'string',
    requiresArg: true,
    describe:
      "With --spec: the operationId to probe (default: the document's first GET with no required body, one that needs no parameter value first, else one the document's examples, defaults or enums fill)",
  },
  param: {
    type: 'string',
    array: true,
    requiresArg: true,
    describe:
      "With --spec: NAME=VALUE, repeatable: a path or query parameter's value for the probed operation (over the document's example, default or enum)",
  },
  plans: { type: 'string', requiresArg: true, describe: 'JSON file overriding plan limits and windows' },
  windows: { type: 'number', default: 2, requiresArg: true, describe: 'Windows sent at the plan rate' },
  'time-scale': {
    type: 'number',
    requiresArg: true,
    describe: `The target's windows are the plan's divided by N (embedded: ${DEFAULTS.embeddedTimeScale}, else 1; with --tenants 1 by default, embedded too: real quotas)`,
  },
  'max-rate': {
    type: 'number',
    default: CAPACITY_DEFAULTS.maxRate as number,
    requiresArg: true,
    describe:
      'Requests per second per key this machine can drive; faster plans get their own, slower embedded server',
  },
  daily: {
    type: 'boolean',
    default: false,
    describe:
      "Also walk each plan's daily quota at the plan rate to its 429 (day / minute limit windows: hours against a real server; the time is said before starting)",
  },
  'max-wait': {
    type: 'string',
    requiresArg: true,
    describe:
      "The longest single wait a plan's probe accepts (e.g. 90s, 10m): a 429 that tells a longer one stops that plan's probe, saying which; a shorter one is waited out and measured (a block after the first excess). Default: the plan's longest window as the target runs it, at least 1m and at most 10m",
  },
  'probe-ban': {
    type: 'boolean',
    default: false,
    describe:
      'Provoke and measure the temporary ban: exhaust a window, send requests inside its Retry-After until banned, wait the ban out. Only on --ban-key',
  },
  'ban-key': {
    type: 'string',
    requiresArg: true,
    describe:
      'PLAN=KEY that --probe-ban may get banned; never one of the --api-key keys (embedded: PLAN, default free, on a server of its own)',
  },
  'ban-max-wait': {
    type: 'string',
    default: '15m',
    requiresArg: true,
    describe: 'Longest announced ban --probe-ban waits out to see it end (e.g. 90s, 15m, 1h)',
  },
  threshold: {
    type: 'string',
    array: true,
    requiresArg: true,
    describe:
      "Pass/fail criterion, repeatable, e.g. 'capacity.pro.accepted_per_minute>=300', 'capacity.free.first_429_at==61', 'capacity.free.reset_accuracy_ms<=1000', 'capacity.free.max_in_flight>=4' (requests in flight the target admits, when a concurrency limit was seen)",
  },
  tenants: {
    type: 'string',
    requiresArg: true,
    describe:
      "Tenant capacity instead: ramp tenants of a plan ('pro') or a mix in fixed proportions ('free=4,pro=1'), each at its plan's full quota, until a step breaks; report the largest number that held",
  },
  'tenant-threshold': {
    type: 'string',
    array: true,
    requiresArg: true,
    describe: `--tenants: what each step must keep, repeatable, as run's --threshold (default ${CAPACITY_DEFAULTS.tenantThreshold}); 5xx, 429s to paced tenants and limiter header failures always break a step`,
  },
  'step-duration': {
    type: 'string',
    requiresArg: true,
    describe: `--tenants: length of each step (default ${CAPACITY_DEFAULTS.stepDuration})`,
  },
  'max-tenants': {
    type: 'number',
    requiresArg: true,
    describe: `--tenants: the ramp's bound (default ${CAPACITY_DEFAULTS.maxTenants.toLocaleString('en-US')}; the embedded server mints that many keys)`,
  },
  'tenants-start': { type: 'number', requiresArg: true, describe: '--tenants: the first step (default 1)' },
  'tenants-file': {
    type: 'string',
    requiresArg: true,
    describe:
      '--tenants with --base-url: the keys, CSV or JSON (plan,key[,name]; key env:NAME reads a variable), as run --tenants; never printed or written',
  },
  out: { type: 'string', requiresArg: true, describe: 'Directory for result.json and report.html' },
  timeout: { type: 'string', default: DEFAULTS.timeout, describe: 'Request timeout (e.g. 10s, 500ms)' },
  quiet: { type: 'boolean', default: false, describe: 'Only the result path' },
  'print-config': {
    type: 'boolean',
    default: false,
    describe:
      'Print the resolved configuration as JSON (keys as where they came from) and exit: nothing started or sent',
  },
  ...METRICS_FLAGS,
  ...NETWORK_FLAGS,
  ...REFUSAL_FLAGS,
} as const satisfies Record<string, Options>;

/** The parsed flags, camel-cased as yargs gives them. */
export type CapacityArgs = InferredOptionTypes<typeof CAPACITY_FLAGS> & {
  [K in keyof InferredOptionTypes<typeof CAPACITY_FLAGS> as CamelCase<K & string>]: InferredOptionTypes<
    typeof CAPACITY_FLAGS
  >[K];
};

type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
