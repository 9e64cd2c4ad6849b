import { parseDuration } from '../api/duration.ts';
import { InputError } from '../api/input-error.ts';
import type { LimiterModelName } from '../api/limiter-models.ts';
import { applyPlanOverrides, DEFAULT_PLANS } from '../api/plans.ts';
import { TENANT_SEED_ENV } from '../api/tenants.ts';
import type { OmittableHeader } from '../server/faults.ts';
import type { ServerOptions } from '../server/index.ts';
import {
  type HEADER_DIALECTS,
  type LongerWindows,
  type RefusalStatus,
  validateServerOptions,
} from '../server/options.ts';
import { parseQuotaStoreUrl } from './quota-store-url.ts';
import { readJsonFile } from './read-json-file.ts';
import { Secret } from './secret.ts';

/** What `serve`'s flags say, as yargs hands them over (camel-cased). */
export type ServeArgs = {
  host: string;
  port: number;
  plans?: string | undefined;
  keys?: string | undefined;
  tenantKeys?: string | undefined;
  quotaStore?: string | undefined;
  timeScale: number;
  sunset?: string | undefined;
  seedData: number;
  rateLimit: boolean;
  limiter: string;
  longerWindows?: string | undefined;
  burst?: number | undefined;
  countRefused?: boolean | undefined;
  headers: string;
  refusalStatus?: number | undefined;
  refusalRetryAfter?: boolean | undefined;
  banAfter: number;
  banDuration: string;
  block?: string;
  faultLatency?: string | undefined;
  faultJitter?: string | undefined;
  faultStall?: string | undefined;
  faultErrorRate?: number | undefined;
  faultResetRate?: number | undefined;
  faultOmitHeader?: string | undefined;
  faultWrongRemaining?: number | undefined;
  faultResetAsDelta?: boolean | undefined;
  faultNoRetryAfter?: boolean | undefined;
  faultLimiterLeak?: number | undefined;
  faultRemainingRises?: boolean | undefined;
  faultResetDrift?: boolean | undefined;
  faultWrongWindowHeaders?: boolean | undefined;
  faultEarly429?: boolean | undefined;
  faultRetryAfterMismatch?: number | undefined;
  faultRejectRetry?: boolean | undefined;
  faultCacheable429?: boolean | undefined;
  faultNoSunsetLink?: boolean | undefined;
  faultWrongLimit?: boolean | undefined;
  faultErrorBodyStatus?: boolean | undefined;
  faultXJsonContentType?: boolean | undefined;
  faultBadDeprecation?: boolean | undefined;
  faultSchemaViolation?: boolean | undefined;
  faultDayRetryAsMinute?: boolean | undefined;
  faultSharedBucket?: string | undefined;
  faultSeed?: number | undefined;
};

/** The reference server as the flags and the environment ask for it, checked before it listens. */
export interface ServeConfig {
  /** What startServer takes, the minted keys' seed left out: it is `tenantSeed`. */
  readonly server: Readonly<Omit<ServerOptions, 'tenantSeed'>>;
  /** The seed of minted keys, from the environment only; undefined for the default seed. */
  readonly tenantSeed: Secret | undefined;
  /** The --keys file, for the listing of where the keys came from. */
  readonly keysFile: string | undefined;
}

/** Every default and refusal of `serve`: an InputError naming the flag, before anything listens. */
export function resolveServeConfig(args: ServeArgs, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const { tenantSeed, ...server } = serverOptionsFromArgs(args, env);
  try {
    validateServerOptions({ ...server, tenantSeed });
  } catch (error) {
    throw new InputError(flagMessage((error as Error).message, args));
  }
  return Object.freeze({
    server,
    tenantSeed: tenantSeed === undefined ? undefined : new Secret(tenantSeed, TENANT_SEED_ENV),
    keysFile: args.keys,
  });
}

/** The options startServer takes, the seed revealed for the one place that mints with it. */
export function serverOptionsOf(config: ServeConfig): ServerOptions {
  return { ...config.server, tenantSeed: config.tenantSeed?.reveal() };
}

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
    refusalStatus: args.refusalStatus as RefusalStatus,
    refusalRetryAfter: args.refusalRetryAfter,
    limiter: args.limiter as LimiterModelName,
    longerWindows: args.longerWindows as LongerWindows | undefined,
    burst: number('burst', args.burst),
    countRefused: args.countRefused || undefined,
    quotaStore: args.quotaStore === undefined ? undefined : parseQuotaStoreUrl(args.quotaStore).url,
    banAfter: number('ban-after', args.banAfter),
    banDurationMs: parseDuration(args.banDuration, '--ban-duration'),
    blockMs: args.block === undefined ? undefined : parseDuration(args.block, '--block'),
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
  blockMs: '--block',
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
  refusalStatus: '--refusal-status',
  longerWindows: '--longer-windows',
};

/** validateServerOptions' message, in the flags the user typed. */
function flagMessage(text: string, args: ServeArgs): string {
  let message = text;
  for (const [name, flag] of Object.entries(FLAG_OF))
    if (message.startsWith(`${name} `)) message = `${flag}${message.slice(name.length)}`;
  if (message.startsWith('tenantKeys:')) message = `--tenant-keys${message.slice('tenantKeys'.length)}`;
  if (message.startsWith('keys:')) message = `--keys ${args.keys}${message.slice(4)}`;
  if (message.startsWith('plans:')) message = `--plans ${args.plans}${message.slice(5)}`;
  return message.replace('a quotaStore', '--quota-store');
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
