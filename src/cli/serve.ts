import type { Argv } from 'yargs';
import { DEMO_KEYS } from '../api/demo-keys.ts';
import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import { LIMITER_MODELS, type LimiterModelName } from '../api/limiter-models.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../api/plans.ts';
import { TENANT_SEED_ENV } from '../api/tenants.ts';
import { OMITTABLE_HEADERS, type OmittableHeader } from '../server/faults.ts';
import { type RunningServer, type ServerOptions, startServer } from '../server/index.ts';
import { DEFAULT_TENANT_SEED, HEADER_DIALECTS, validateServerOptions } from '../server/options.ts';
import { EXIT } from './exit-codes.ts';
import { parseQuotaStoreUrl } from './quota-store-url.ts';
import { readJsonFile } from './read-json-file.ts';

export function serveOptions(yargs: Argv) {
  // A value flag given without its value (`--port`) is an error, not a silent default.
  return yargs
    .parserConfiguration({ 'strip-dashed': false })
    .requiresArg([
      'port',
      'host',
      'plans',
      'keys',
      'tenant-keys',
      'time-scale',
      'sunset',
      'seed-data',
      'ban-after',
      'ban-duration',
      'fault-latency',
      'fault-jitter',
      'fault-stall',
      'fault-error-rate',
      'fault-reset-rate',
      'fault-omit-header',
      'fault-wrong-remaining',
      'fault-limiter-leak',
      'fault-retry-after-mismatch',
      'fault-seed',
      'headers',
      'limiter',
      'burst',
    ])
    .group(
      [
        'host',
        'port',
        'plans',
        'keys',
        'tenant-keys',
        'time-scale',
        'sunset',
        'seed-data',
        'rate-limit',
        'limiter',
        'burst',
        'count-refused',
        'headers',
        'ban-after',
        'ban-duration',
      ],
      'Server:',
    )
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
    .option('port', { type: 'number', default: 8080, describe: 'Port to listen on (0: a free port)' })
    .option('plans', {
      type: 'string',
      describe: 'JSON file overriding plan limits, e.g. {"enterprise":{"perMinute":20000}}',
    })
    .option('keys', { type: 'string', describe: 'JSON file of API key -> plan, replacing the demo keys' })
    .option('tenant-keys', {
      type: 'string',
      describe: `Mint keys for a tenant mix beside the others, plan=N,... (e.g. free=200,pro=50): the n-th of a plan is mintedKey(seed, plan, n) of src/api/tenants.ts, the seed from $${TENANT_SEED_ENV} or else '${DEFAULT_TENANT_SEED}'; never printed`,
    })
    .option('quota-store', {
      type: 'string',
      describe:
        "redis://HOST:PORT, or redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER: keep the limiter's counts there, so that several instances enforce one limit (reconnected after a restart or a failover)",
    })
    .option('time-scale', {
      type: 'number',
      default: 1,
      describe: 'Divide every rate-limit window and the ban by N (60: a minute lasts 1 s)',
    })
    .option('sunset', {
      type: 'string',
      describe: 'Sunset date of the deprecated getPetById (ISO 8601); after it, 410',
    })
    .option('seed-data', {
      type: 'number',
      default: 20,
      describe: 'Pets to create at start (with categories and stock)',
    })
    .option('rate-limit', {
      type: 'boolean',
      default: true,
      describe: 'Rate limiting (--no-rate-limit turns it and its headers off)',
    })
    .option('limiter', {
      type: 'string',
      choices: [...LIMITER_MODELS],
      default: 'fixed',
      describe:
        "Algorithm of each plan's shortest window (longer ones, the day, stay fixed windows): fixed (windows that start with their first request), sliding (a sliding log: at most the limit in any span of the window), token-bucket (--burst tokens, refilled at limit/window), gcra (nginx limit_req: one request per window/limit, plus --burst at once). Only fixed works with --quota-store",
    })
    .option('burst', {
      type: 'number',
      describe:
        "token-bucket: the bucket's size (default the window's limit); gcra: requests admitted at once beyond the first (default 0)",
    })
    .option('count-refused', {
      type: 'boolean',
      describe:
        'sliding: refused requests count too, each for a window after it came (as gateways that count every request): a client that keeps knocking never gets in',
    })
    .option('headers', {
      type: 'string',
      choices: [...HEADER_DIALECTS],
      default: 'seed',
      describe:
        "How the quota is told: seed (X-RateLimit-*, Reset a Unix time), seconds-until or unix-ms (Reset's other units), ietf-8, ietf-7, ietf-6 (the IETF drafts' RateLimit fields), none (only Retry-After on a 429)",
    })
    .option('ban-after', {
      type: 'number',
      default: 5,
      describe: 'Requests a key may send after a 429 before it is banned',
    })
    .option('ban-duration', {
      type: 'string',
      default: '10m',
      describe: 'Length of the temporary ban (scaled by --time-scale)',
    })
    .group(
      [
        'fault-latency',
        'fault-jitter',
        'fault-stall',
        'fault-error-rate',
        'fault-reset-rate',
        'fault-omit-header',
        'fault-wrong-remaining',
        'fault-reset-as-delta',
        'fault-no-retry-after',
        'fault-limiter-leak',
        'fault-remaining-rises',
        'fault-reset-drift',
        'fault-wrong-window-headers',
        'fault-early-429',
        'fault-retry-after-mismatch',
        'fault-reject-retry',
        'fault-cacheable-429',
        'fault-no-sunset-link',
        'fault-wrong-limit',
        'fault-error-body-status',
        'fault-x-json-content-type',
        'fault-bad-deprecation',
        'fault-schema-violation',
        'fault-day-retry-as-minute',
        'fault-shared-bucket',
        'fault-seed',
      ],
      'Fault injection (off by default; for proving checks):',
    )
    .option('fault-latency', {
      type: 'string',
      describe: 'Add a fixed latency to every response (e.g. 50ms)',
    })
    .option('fault-jitter', { type: 'string', describe: 'Add a random latency in [0, D) (e.g. 20ms)' })
    .option('fault-stall', {
      type: 'string',
      describe: 'Stall all requests for D every P, as D/P (e.g. 1s/10s)',
    })
    .option('fault-error-rate', { type: 'number', describe: 'Share (0..1) of requests answered 500' })
    .option('fault-reset-rate', { type: 'number', describe: 'Share (0..1) of connections reset' })
    .option('fault-omit-header', {
      type: 'string',
      choices: [...OMITTABLE_HEADERS],
      describe: 'Leave this rate-limit header out',
    })
    .option('fault-wrong-remaining', { type: 'number', describe: 'Add N to the true X-RateLimit-Remaining' })
    .option('fault-reset-as-delta', {
      type: 'boolean',
      describe: 'Send X-RateLimit-Reset as seconds-until, not Unix time',
    })
    .option('fault-no-retry-after', { type: 'boolean', describe: 'Send 429 without Retry-After' })
    .option('fault-limiter-leak', { type: 'number', describe: 'Let N extra requests through per window' })
    .option('fault-remaining-rises', {
      type: 'boolean',
      describe: 'Let X-RateLimit-Remaining rise within a window (even values sent as 2 more)',
    })
    .option('fault-reset-drift', {
      type: 'boolean',
      describe: 'Move X-RateLimit-Reset earlier as a window is used (true reset + Remaining s)',
    })
    .option('fault-wrong-window-headers', {
      type: 'boolean',
      describe: 'Describe the longest window (the day) even when a shorter one is closer to exhaustion',
    })
    .option('fault-early-429', {
      type: 'boolean',
      describe: 'Answer 429 while quota remains (once half of the window is used)',
    })
    .option('fault-retry-after-mismatch', {
      type: 'number',
      describe: 'Add N seconds to Retry-After, so that it disagrees with X-RateLimit-Reset',
    })
    .option('fault-reject-retry', {
      type: 'boolean',
      describe: "Refuse again the first request after a 429's Retry-After has elapsed",
    })
    .option('fault-cacheable-429', {
      type: 'boolean',
      describe: 'Send Cache-Control: public, max-age=60 with 429',
    })
    .option('fault-no-sunset-link', {
      type: 'boolean',
      describe: 'Leave Link rel="sunset" out of the deprecated operation',
    })
    .option('fault-wrong-limit', {
      type: 'boolean',
      describe: "Send X-RateLimit-Limit as none of the plan's limits (the true one + 1)",
    })
    .option('fault-error-body-status', {
      type: 'boolean',
      describe: 'Name another status in Error bodies (500 on a 4xx, 400 on a 5xx)',
    })
    .option('fault-x-json-content-type', {
      type: 'boolean',
      describe: 'Send JSON bodies as Content-Type: application/x-json',
    })
    .option('fault-bad-deprecation', {
      type: 'boolean',
      describe: 'Send Deprecation as an HTTP-date instead of @<unix-seconds>',
    })
    .option('fault-schema-violation', {
      type: 'boolean',
      describe: "Send pets with a status outside the document's enum ('lost')",
    })
    .option('fault-day-retry-as-minute', {
      type: 'boolean',
      describe: "A 429 of the daily quota announces a minute window's wait (Retry-After and Reset)",
    })
    .option('fault-shared-bucket', {
      type: 'string',
      describe:
        "Break tenant isolation: each plan's keys draw from one bucket (the plan's limit x its keys, or x N with --fault-shared-bucket N) and no key's own limit holds, while the headers tell each key its own count",
    })
    .option('fault-seed', { type: 'number', describe: 'Seed of the random faults, for repeatable runs' });
}

type ServeArgs = Awaited<ReturnType<typeof serveOptions>['argv']>;

function parseStall(text: string) {
  const parts = text.split('/');
  if (parts.length !== 2) throw new InputError(`--fault-stall: '${text}' is not D/P (e.g. 1s/10s)`);
  return {
    forMs: parseDuration(parts[0] as string, '--fault-stall'),
    everyMs: parseDuration(parts[1] as string, '--fault-stall'),
  };
}

function parseKeys(path: string): Record<string, string> {
  const keys = readJsonFile(path, '--keys');
  if (
    !keys ||
    typeof keys !== 'object' ||
    Array.isArray(keys) ||
    !Object.values(keys).every((v) => typeof v === 'string')
  ) {
    throw new InputError(`--keys ${path}: expected a JSON object of "key": "plan"`);
  }
  if (Object.keys(keys).length === 0) throw new InputError(`--keys ${path}: no keys`);
  return keys as Record<string, string>;
}

/** `--tenant-keys free=200,pro=50`; the plans themselves are checked with the other options. */
export function parseTenantKeys(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const part of text.split(',')) {
    const m = /^\s*([^=\s]+)\s*=\s*(\S+)\s*$/.exec(part);
    if (!m) throw new InputError(`--tenant-keys: '${part}' is not plan=N (e.g. free=200,pro=50)`);
    const [, plan, count] = m as unknown as [string, string, string];
    if (!/^\d+$/.test(count) || Number(count) < 1)
      throw new InputError(`--tenant-keys: ${plan}=${count}: N must be a whole number >= 1`);
    if (counts[plan] !== undefined) throw new InputError(`--tenant-keys: plan '${plan}' is given twice`);
    counts[plan] = Number(count);
  }
  return counts;
}

/**
 * Turns parsed flags into ServerOptions; every mistake is an InputError naming the flag. The seed
 * of minted keys comes from the environment, never from a flag: a command line is visible to every
 * user of the machine.
 */
export function serverOptionsFromArgs(args: ServeArgs, env: NodeJS.ProcessEnv = process.env): ServerOptions {
  const sunset = args.sunset === undefined ? undefined : new Date(args.sunset);
  if (sunset && Number.isNaN(sunset.getTime()))
    throw new InputError(`--sunset: '${args.sunset}' is not a date`);
  const number = (name: string, value: number | undefined) => {
    if (value !== undefined && Number.isNaN(value)) throw new InputError(`--${name}: expected a number`);
    return value;
  };
  return {
    host: args.host,
    port: number('port', args.port),
    plans: args.plans
      ? applyPlanOverrides(DEFAULT_PLANS, readJsonFile(args.plans, '--plans'), `--plans ${args.plans}`)
      : undefined,
    keys: args.keys ? parseKeys(args.keys) : undefined,
    tenantKeys: args.tenantKeys === undefined ? undefined : parseTenantKeys(args.tenantKeys),
    tenantSeed: args.tenantKeys === undefined ? undefined : env[TENANT_SEED_ENV] || undefined,
    timeScale: number('time-scale', args.timeScale),
    sunset,
    seedData: number('seed-data', args.seedData),
    rateLimit: args.rateLimit,
    headerDialect: args.headers as (typeof HEADER_DIALECTS)[number],
    limiter: args.limiter as LimiterModelName,
    burst: number('burst', args.burst),
    countRefused: args.countRefused || undefined,
    quotaStore: args.quotaStore === undefined ? undefined : parseQuotaStoreUrl(args.quotaStore).url,
    banAfter: number('ban-after', args.banAfter),
    banDurationMs: parseDuration(args.banDuration, '--ban-duration'),
    faults: {
      latencyMs:
        args.faultLatency === undefined ? undefined : parseDuration(args.faultLatency, '--fault-latency'),
      jitterMs:
        args.faultJitter === undefined ? undefined : parseDuration(args.faultJitter, '--fault-jitter'),
      stall: args.faultStall === undefined ? undefined : parseStall(args.faultStall),
      errorRate: number('fault-error-rate', args.faultErrorRate),
      resetRate: number('fault-reset-rate', args.faultResetRate),
      omitHeader: args.faultOmitHeader as OmittableHeader | undefined,
      wrongRemaining: number('fault-wrong-remaining', args.faultWrongRemaining),
      resetAsDelta: args.faultResetAsDelta,
      noRetryAfter: args.faultNoRetryAfter,
      limiterLeak: number('fault-limiter-leak', args.faultLimiterLeak),
      remainingRises: args.faultRemainingRises,
      resetDrift: args.faultResetDrift,
      wrongWindowHeaders: args.faultWrongWindowHeaders,
      early429: args.faultEarly429,
      retryAfterMismatch: number('fault-retry-after-mismatch', args.faultRetryAfterMismatch),
      rejectRetry: args.faultRejectRetry,
      cacheable429: args.faultCacheable429,
      noSunsetLink: args.faultNoSunsetLink,
      wrongLimit: args.faultWrongLimit,
      errorBodyStatus: args.faultErrorBodyStatus,
      xJsonContentType: args.faultXJsonContentType,
      badDeprecation: args.faultBadDeprecation,
      schemaViolation: args.faultSchemaViolation,
      dayRetryAsMinute: args.faultDayRetryAsMinute,
      sharedBucket: sharedBucketSize(args.faultSharedBucket),
      seed: number('fault-seed', args.faultSeed),
    },
  };
}

/** validateServerOptions speaks of option names; the CLI user typed flags. */
const FLAG_OF: Record<string, string> = {
  timeScale: '--time-scale',
  banDurationMs: '--ban-duration',
  banAfter: '--ban-after',
  seedData: '--seed-data',
  port: '--port',
  'fault errorRate': '--fault-error-rate',
  'fault resetRate': '--fault-reset-rate',
  'fault latencyMs': '--fault-latency',
  'fault jitterMs': '--fault-jitter',
  'fault limiterLeak': '--fault-limiter-leak',
  'fault retryAfterMismatch': '--fault-retry-after-mismatch',
  'fault stall': '--fault-stall',
  'fault sharedBucket': '--fault-shared-bucket',
  tenantKeys: '--tenant-keys',
  sunset: '--sunset',
  limiter: '--limiter',
  burst: '--burst',
  countRefused: '--count-refused',
};

/** How many keys were minted, and from which seed: never a key, nor a seed from the environment. */
function printMinted(counts: Record<string, number>, seedFromEnv: boolean): void {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const perPlan = Object.entries(counts)
    .map(([plan, n]) => `${plan} ${n}`)
    .join(', ');
  const seed = seedFromEnv
    ? `the seed in $${TENANT_SEED_ENV}`
    : `the default seed '${DEFAULT_TENANT_SEED}' (mintedKey(seed, plan, n) in src/api/tenants.ts)`;
  console.log(`minted ${total} tenant keys (${perPlan}) from ${seed}`);
}

export async function serve(args: ServeArgs): Promise<void> {
  const options = serverOptionsFromArgs(args);
  try {
    validateServerOptions(options);
  } catch (error) {
    let message = (error as Error).message;
    for (const [name, flag] of Object.entries(FLAG_OF))
      if (message.startsWith(`${name} `)) message = `${flag}${message.slice(name.length)}`;
    if (message.startsWith('tenantKeys:')) message = `--tenant-keys${message.slice('tenantKeys'.length)}`;
    if (message.startsWith('keys:')) message = `--keys ${args.keys}${message.slice(4)}`;
    if (message.startsWith('plans:')) message = `--plans ${args.plans}${message.slice(5)}`;
    message = message.replace('a quotaStore', '--quota-store');
    throw new InputError(message);
  }
  let server: RunningServer;
  try {
    server = await startServer(options);
  } catch (error) {
    if (error instanceof InputError && error.message.startsWith('quotaStore '))
      throw new InputError(`--quota-store${error.message.slice('quotaStore'.length)}`, EXIT.UNREACHABLE);
    if (error instanceof InputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // Only a refused listen is the user's environment; anything else is ours and must say so.
    if (!code || !['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EINVAL'].includes(code))
      throw error;
    throw new InputError(
      `cannot listen on ${options.host}:${options.port}: ${code ?? (error as Error).message}`,
      EXIT.LISTEN_FAILED,
    );
  }
  console.log(`listening on ${server.url}`);
  if (options.keys) {
    console.log(`API keys: ${Object.keys(options.keys).length} from ${args.keys}`);
  } else {
    console.log('demo keys (Authorization: Bearer <key>):');
    for (const [key, plan] of Object.entries(DEMO_KEYS)) console.log(`  ${key.padEnd(20)} ${plan}`);
  }
  if (options.tenantKeys) printMinted(options.tenantKeys, options.tenantSeed !== undefined);
  if (options.limiter !== 'fixed')
    console.log(
      `limiter ${options.limiter}${options.burst === undefined ? '' : ` (burst ${options.burst})`}${options.countRefused ? ', refused requests counted' : ''} on each plan's shortest window; longer windows fixed`,
    );
  if (options.timeScale !== 1)
    console.log(`time scale ${options.timeScale}: a minute window lasts ${60 / (options.timeScale ?? 1)} s`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      console.log(`${signal}: stopping`);
      server.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

/** `--fault-shared-bucket` alone pools all of a plan's keys; with N, a bucket of N keys' worth. */
function sharedBucketSize(flag: string | undefined): boolean | number | undefined {
  if (flag === undefined) return undefined;
  if (flag === '' || flag === 'true') return true;
  const n = Number(flag);
  if (!Number.isInteger(n) || n < 1)
    throw new InputError(`--fault-shared-bucket: '${flag}' is not a number of keys (a whole number >= 1)`);
  return n;
}
