import type { Options } from 'yargs';
import { LIMITER_MODELS } from '../api/limiter-models.ts';
import { TENANT_SEED_ENV } from '../api/tenants.ts';
import { OMITTABLE_HEADERS } from '../server/faults.ts';
import {
  DEFAULT_TENANT_SEED,
  HEADER_DIALECTS,
  LONGER_WINDOWS,
  REFUSAL_STATUSES,
  SERVER_DEFAULTS,
} from '../server/options.ts';

/**
 * `serve`'s options as data, resolved by src/config/serve.ts. A value flag given without its value
 * (`--port`) is an error, not a silent default: every one of them requires its argument.
 */
export const SERVE_FLAGS = {
  host: {
    type: 'string',
    default: '127.0.0.1',
    describe: 'Address to listen on',
    requiresArg: true,
    group: 'Server:',
  },
  port: {
    type: 'number',
    default: 8080,
    describe: 'Port to listen on (0: a free port)',
    requiresArg: true,
    group: 'Server:',
  },
  plans: {
    type: 'string',
    describe: 'JSON file overriding plan limits, e.g. {"enterprise":{"perMinute":20000}}',
    requiresArg: true,
    group: 'Server:',
  },
  keys: {
    type: 'string',
    describe: 'JSON file of API key -> plan, replacing the demo keys',
    requiresArg: true,
    group: 'Server:',
  },
  'tenant-keys': {
    type: 'string',
    describe: `Mint keys for a tenant mix beside the others, plan=N,... (e.g. free=200,pro=50): the n-th of a plan is mintedKey(seed, plan, n) of src/api/tenants.ts, the seed from $${TENANT_SEED_ENV} or else '${DEFAULT_TENANT_SEED}'; never printed`,
    requiresArg: true,
    group: 'Server:',
  },
  'quota-store': {
    type: 'string',
    describe:
      "redis://HOST:PORT, or redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER: keep the limiter's counts there, so that several instances enforce one limit (reconnected after a restart or a failover)",
  },
  'time-scale': {
    type: 'number',
    default: 1,
    describe: 'Divide every rate-limit window and the ban by N (60: a minute lasts 1 s)',
    requiresArg: true,
    group: 'Server:',
  },
  sunset: {
    type: 'string',
    describe: 'Sunset date of the deprecated getPetById (ISO 8601); after it, 410',
    requiresArg: true,
    group: 'Server:',
  },
  'seed-data': {
    type: 'number',
    default: 20,
    describe: 'Pets to create at start (with categories and stock)',
    requiresArg: true,
    group: 'Server:',
  },
  'rate-limit': {
    type: 'boolean',
    default: true,
    describe: 'Rate limiting (--no-rate-limit turns it and its headers off)',
    group: 'Server:',
  },
  limiter: {
    type: 'string',
    choices: [...LIMITER_MODELS],
    default: 'fixed',
    describe:
      "Algorithm of each plan's shortest window (longer ones stay fixed windows, unless --longer-windows sliding): fixed (windows that start with their first request), sliding (a sliding log: at most the limit in any span of the window), sliding-counter (periods aligned to the clock, the previous one's count weighted by how much of it the window still covers, as gateways and CDNs count), token-bucket (--burst tokens, refilled at limit/window), gcra (nginx limit_req: one request per window/limit, plus --burst at once). Only fixed works with --quota-store",
    requiresArg: true,
    group: 'Server:',
  },
  'longer-windows': {
    type: 'string',
    choices: [...LONGER_WINDOWS],
    default: SERVER_DEFAULTS.longerWindows,
    describe:
      "Algorithm of each plan's windows longer than the shortest: fixed, or sliding (each a sliding log, as frameworks keep several moving windows at once: e.g. 10 per 10 s and 20 per 30 s); the day, and any window of a day or more, stays fixed. Not with --quota-store",
    requiresArg: true,
    group: 'Server:',
  },
  burst: {
    type: 'number',
    describe:
      "token-bucket: the bucket's size (default the window's limit); gcra: requests admitted at once beyond the first (default 0)",
    requiresArg: true,
    group: 'Server:',
  },
  'count-refused': {
    type: 'boolean',
    describe:
      'sliding, sliding-counter: refused requests count too, as admitted ones do (as gateways that count every request), in the --longer-windows sliding logs too: a client that keeps knocking never gets in',
    group: 'Server:',
  },
  headers: {
    type: 'string',
    choices: [...HEADER_DIALECTS],
    default: 'seed',
    describe:
      "How the quota is told: seed (X-RateLimit-*, Reset a Unix time), seconds-until or unix-ms (Reset's other units), ietf-8, ietf-7, ietf-6 (the IETF drafts' RateLimit fields), none (only Retry-After on a 429)",
    requiresArg: true,
    group: 'Server:',
  },
  'refusal-status': {
    type: 'number',
    choices: [...REFUSAL_STATUSES],
    default: SERVER_DEFAULTS.refusalStatus,
    describe:
      "Status of every refusal of the limiter (a window's excess, a --block, a ban): 429, 503 (nginx limit_req's default) or 403 (as some APIs refuse); the Error body's status follows it, its code stays rate_limited or temporarily_banned",
    requiresArg: true,
    group: 'Server:',
  },
  'refusal-retry-after': {
    type: 'boolean',
    default: SERVER_DEFAULTS.refusalRetryAfter,
    describe:
      "Retry-After on every refusal (--no-refusal-retry-after leaves it out, as nginx's 503 does; --headers none drops the quota fields too)",
    group: 'Server:',
  },
  'ban-after': {
    type: 'number',
    default: 5,
    describe: 'Requests a key may send after a 429 before it is banned',
    requiresArg: true,
    group: 'Server:',
  },
  'ban-duration': {
    type: 'string',
    default: '10m',
    describe: 'Length of the temporary ban (scaled by --time-scale)',
    requiresArg: true,
    group: 'Server:',
  },
  block: {
    type: 'string',
    describe:
      "Block a key for this long at its first excess (scaled by --time-scale), as proxies and rate-limiter-flexible's blockDuration do: every request refused until it ends, Retry-After telling it (e.g. 30s). Default: no block",
    requiresArg: true,
    group: 'Server:',
  },
  'fault-latency': {
    type: 'string',
    describe: 'Add a fixed latency to every response (e.g. 50ms)',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-jitter': {
    type: 'string',
    describe: 'Add a random latency in [0, D) (e.g. 20ms)',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-stall': {
    type: 'string',
    describe: 'Stall all requests for D every P, as D/P (e.g. 1s/10s)',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-error-rate': {
    type: 'number',
    describe: 'Share (0..1) of requests answered 500',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-reset-rate': {
    type: 'number',
    describe: 'Share (0..1) of connections reset',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-omit-header': {
    type: 'string',
    choices: [...OMITTABLE_HEADERS],
    describe: 'Leave this rate-limit header out',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-wrong-remaining': {
    type: 'number',
    describe: 'Add N to the true X-RateLimit-Remaining',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-reset-as-delta': {
    type: 'boolean',
    describe: 'Send X-RateLimit-Reset as seconds-until, not Unix time',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-no-retry-after': {
    type: 'boolean',
    describe: 'Send 429 without Retry-After',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-limiter-leak': {
    type: 'number',
    describe: 'Let N extra requests through per window',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-remaining-rises': {
    type: 'boolean',
    describe: 'Let X-RateLimit-Remaining rise within a window (even values sent as 2 more)',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-reset-drift': {
    type: 'boolean',
    describe: 'Move X-RateLimit-Reset earlier as a window is used (true reset + Remaining s)',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-wrong-window-headers': {
    type: 'boolean',
    describe: 'Describe the longest window (the day) even when a shorter one is closer to exhaustion',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-early-429': {
    type: 'boolean',
    describe: 'Answer 429 while quota remains (once half of the window is used)',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-retry-after-mismatch': {
    type: 'number',
    describe: 'Add N seconds to Retry-After, so that it disagrees with X-RateLimit-Reset',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-reject-retry': {
    type: 'boolean',
    describe: "Refuse again the first request after a 429's Retry-After has elapsed",
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-cacheable-429': {
    type: 'boolean',
    describe: 'Send Cache-Control: public, max-age=60 with 429',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-no-sunset-link': {
    type: 'boolean',
    describe: 'Leave Link rel="sunset" out of the deprecated operation',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-wrong-limit': {
    type: 'boolean',
    describe: "Send X-RateLimit-Limit as none of the plan's limits (the true one + 1)",
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-error-body-status': {
    type: 'boolean',
    describe: 'Name another status in Error bodies (500 on a 4xx, 400 on a 5xx)',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-x-json-content-type': {
    type: 'boolean',
    describe: 'Send JSON bodies as Content-Type: application/x-json',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-bad-deprecation': {
    type: 'boolean',
    describe: 'Send Deprecation as an HTTP-date instead of @<unix-seconds>',
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-schema-violation': {
    type: 'boolean',
    describe: "Send pets with a status outside the document's enum ('lost')",
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-day-retry-as-minute': {
    type: 'boolean',
    describe: "A 429 of the daily quota announces a minute window's wait (Retry-After and Reset)",
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-shared-bucket': {
    type: 'string',
    describe:
      "Break tenant isolation: each plan's keys draw from one bucket (the plan's limit x its keys, or x N with --fault-shared-bucket N) and no key's own limit holds, while the headers tell each key its own count",
    group: 'Fault injection (off by default; for proving checks):',
  },
  'fault-seed': {
    type: 'number',
    describe: 'Seed of the random faults, for repeatable runs',
    requiresArg: true,
    group: 'Fault injection (off by default; for proving checks):',
  },
} as const satisfies Record<string, Options>;
