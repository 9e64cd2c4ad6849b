import { DEMO_KEYS } from '../api/demo-keys.ts';
import { InputError } from '../api/input-error.ts';
import { BURST_MODELS, LIMITER_MODELS, type LimiterModelName } from '../api/limiter-models.ts';
import { DEFAULT_PLANS, type PlanTable } from '../api/plans.ts';
import { DIALECTS, type Dialect } from '../api/rate-limit-dialect.ts';
import { MAX_TENANT_KEYS } from '../api/tenants.ts';
import type { FaultOptions } from './faults.ts';

export interface ServerOptions {
  /** Default 127.0.0.1: the reference server is a loopback target. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Plan table; default the seed's. */
  plans?: PlanTable;
  /** API key -> plan name; default the four demo keys. */
  keys?: Record<string, string>;
  /**
   * Plan -> how many keys to mint for a tenant mix, beside `keys` (or the demo keys): the n-th key
   * of a plan (1-based) is `mintedKey(tenantSeed, plan, n)` of src/api/tenants.ts, so that a load
   * generator in another process derives the same keys from the seed and no key is ever passed.
   */
  tenantKeys?: Record<string, number>;
  /** The seed of the minted keys; default DEFAULT_TENANT_SEED. `serve` reads it from TENANT_SEED_ENV. */
  tenantSeed?: string;
  /** Divides every rate-limit window and the ban by this; default 1. */
  timeScale?: number;
  /** When getPetById stops working; default the document's `x-sunset`. */
  sunset?: Date;
  /** Pets to create at start (with categories and stock); default 20. */
  seedData?: number;
  /** False turns the limiter off (and with it the X-RateLimit-* headers), for measuring its cost. */
  rateLimit?: boolean;
  /** Requests after a 429 before the ban; default 5. */
  banAfter?: number;
  /**
   * A key refused once is refused for this long (scaled by `timeScale`), whatever its windows say,
   * as a proxy's block after the first excess; Retry-After tells it. Default: no block.
   */
  blockMs?: number;
  /** Ban length in unscaled ms; default 10 minutes. */
  banDurationMs?: number;
  faults?: FaultOptions;
  /** Fastify's request log; default off (it costs throughput). */
  logger?: boolean;
  /**
   * How the quota is told: the seed's X-RateLimit-* (default), another dialect the load side reads
   * (Reset as seconds until or in ms, IETF drafts 6 to 8), or `none` (a bare 429 with Retry-After).
   */
  headerDialect?: Dialect | 'none';
  /** redis://HOST:PORT: the limiter's counts live there, so that several instances enforce one limit. */
  quotaStore?: string;
  /**
   * The algorithm of each plan's shortest window: `fixed` windows (default, on every window), a
   * `sliding` log, a `token-bucket` or `gcra` (nginx limit_req); the longer windows stay fixed.
   * Only `fixed` works with `quotaStore`.
   */
  limiter?: LimiterModelName;
  /**
   * `sliding`: a plan's windows longer than the shortest and shorter than a day (before time-scaling)
   * are sliding logs too, as frameworks keep several moving windows at once; default `fixed`. The
   * day stays fixed whatever this says. In memory: not with `quotaStore`.
   */
  longerWindows?: LongerWindows;
  /** token-bucket: the bucket's size (default the window's limit); gcra: extra requests (default 0). */
  burst?: number;
  /** sliding, sliding-counter: refused requests count too, as gateways that count every request they see. */
  countRefused?: boolean;
  /**
   * The status of every refusal of the limiter (a window's excess, a block, a ban): 429 by default;
   * 503 as nginx's limit_req answers, 403 as some APIs do, so that a client's handling of those can
   * be tested. The Error body's `status` follows it, its `code` stays `rate_limited` or
   * `temporarily_banned`: the code says why, whatever the status.
   */
  refusalStatus?: RefusalStatus;
  /** False leaves Retry-After out of refusals (a bare 503 as nginx sends it); default true. */
  refusalRetryAfter?: boolean;
}

/** What `longerWindows` may be. */
export const LONGER_WINDOWS = ['fixed', 'sliding'] as const;
export type LongerWindows = (typeof LONGER_WINDOWS)[number];

/** What `refusalStatus` may be: the statuses real limiters refuse with. */
export const REFUSAL_STATUSES = [429, 503, 403] as const;
export type RefusalStatus = (typeof REFUSAL_STATUSES)[number];

export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  timeScale: 1,
  seedData: 20,
  banAfter: 5,
  banDurationMs: 600_000,
  headerDialect: 'seed',
  limiter: 'fixed',
  longerWindows: 'fixed',
  refusalStatus: 429,
  refusalRetryAfter: true,
} as const;

/**
 * The seed of minted tenant keys when none is given: public, so that a user of a standalone server
 * can derive its keys (`mintedKey('petstore-load-demo', 'pro', 7)`). The CLI's embedded server gets
 * a random seed per run instead.
 */
export const DEFAULT_TENANT_SEED = 'petstore-load-demo';

/** What `headerDialect` may be. */
export const HEADER_DIALECTS: readonly (Dialect | 'none')[] = [...DIALECTS, 'none'];

/** The longest delay a fault may inject. */
export const MAX_FAULT_DELAY_MS = 3_600_000;

/** Catches, with one line each, what a programmatic caller or the CLI could get wrong. */
export function validateServerOptions(options: ServerOptions): void {
  const plans = options.plans ?? DEFAULT_PLANS;
  for (const [key, plan] of Object.entries(options.keys ?? DEMO_KEYS)) {
    if (!plans[plan])
      throw new InputError(
        `keys: a key maps to unknown plan '${plan}' (known: ${Object.keys(plans).join(', ')})`,
      );
    if (!/^[\x21-\x7e]+$/.test(key))
      throw new InputError('keys: a key must be printable ASCII without spaces');
  }
  if (!plans.free)
    throw new InputError("plans: a 'free' plan is required (it limits unauthenticated requests)");
  validateTenantKeys(options, plans);
  const positive = {
    timeScale: options.timeScale,
    banDurationMs: options.banDurationMs,
    blockMs: options.blockMs,
  };
  for (const [name, value] of Object.entries(positive)) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0))
      throw new InputError(`${name} must be a positive number`);
  }
  const whole = { port: options.port, seedData: options.seedData, banAfter: options.banAfter };
  for (const [name, value] of Object.entries(whole)) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 0))
      throw new InputError(`${name} must be a whole number`);
  }
  if (options.port !== undefined && options.port > 65_535) throw new InputError('port must be at most 65535');
  if (options.sunset && Number.isNaN(options.sunset.getTime()))
    throw new InputError('sunset is not a valid date');
  if (options.headerDialect !== undefined && !HEADER_DIALECTS.includes(options.headerDialect))
    throw new InputError(`headerDialect must be one of ${HEADER_DIALECTS.join(', ')}`);
  if (
    options.refusalStatus !== undefined &&
    !(REFUSAL_STATUSES as readonly number[]).includes(options.refusalStatus)
  )
    throw new InputError(`refusalStatus must be one of ${REFUSAL_STATUSES.join(', ')}`);
  validateLimiter(options);
  const f = options.faults ?? {};
  for (const [name, value] of Object.entries({ errorRate: f.errorRate, resetRate: f.resetRate })) {
    if (value !== undefined && !(value >= 0 && value <= 1))
      throw new InputError(`fault ${name} must be between 0 and 1`);
  }
  for (const [name, value] of Object.entries({
    latencyMs: f.latencyMs,
    jitterMs: f.jitterMs,
    limiterLeak: f.limiterLeak,
    retryAfterMismatch: f.retryAfterMismatch,
  })) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      throw new InputError(`fault ${name} must be >= 0`);
  }
  // A delay longer than any client waits tests nothing, and past 2^31-1 ms a timer would fire at once.
  for (const [name, value] of Object.entries({
    latencyMs: f.latencyMs,
    jitterMs: f.jitterMs,
    stall: f.stall?.everyMs,
  })) {
    if (value !== undefined && value > MAX_FAULT_DELAY_MS)
      throw new InputError(`fault ${name} must be at most 1h`);
  }
  if (f.retryAfterMismatch !== undefined && !Number.isInteger(f.retryAfterMismatch))
    throw new InputError('fault retryAfterMismatch must be a whole number of seconds');
  if (typeof f.sharedBucket === 'number' && !(Number.isInteger(f.sharedBucket) && f.sharedBucket >= 1))
    throw new InputError("fault sharedBucket: a bucket's size is a whole number of keys >= 1");
  if (f.sharedBucket && options.rateLimit === false)
    throw new InputError('fault sharedBucket needs rate limiting, which is off');
  if (f.stall && !(f.stall.everyMs > 0 && f.stall.forMs >= 0 && f.stall.forMs < f.stall.everyMs)) {
    throw new InputError('fault stall: the stall must be shorter than its period (e.g. 1s/10s)');
  }
}

function validateTenantKeys(options: ServerOptions, plans: PlanTable): void {
  if (
    options.tenantSeed !== undefined &&
    (typeof options.tenantSeed !== 'string' || options.tenantSeed === '')
  )
    throw new InputError('tenantSeed must be a non-empty string');
  const counts = options.tenantKeys;
  if (counts === undefined) return;
  if (typeof counts !== 'object' || counts === null || Array.isArray(counts))
    throw new InputError('tenantKeys must be an object of plan -> number of keys');
  let total = 0;
  for (const [plan, n] of Object.entries(counts)) {
    if (!plans[plan])
      throw new InputError(`tenantKeys: unknown plan '${plan}' (known: ${Object.keys(plans).join(', ')})`);
    if (!(Number.isInteger(n) && n >= 1))
      throw new InputError(`tenantKeys: ${plan} must be a whole number of keys >= 1`);
    total += n;
  }
  // One process is built for 10,000 keys; the bound keeps a typo (1e7) from eating memory and time.
  if (total > MAX_TENANT_KEYS)
    throw new InputError(`tenantKeys: more than ${MAX_TENANT_KEYS.toLocaleString('en')} keys in all`);
}

function validateLimiter(options: ServerOptions): void {
  const limiter = options.limiter ?? SERVER_DEFAULTS.limiter;
  if (!LIMITER_MODELS.includes(limiter))
    throw new InputError(`limiter must be one of ${LIMITER_MODELS.join(', ')}`);
  if (options.burst !== undefined) {
    if (!BURST_MODELS.includes(limiter))
      throw new InputError(
        `burst applies to the ${BURST_MODELS.join(' and ')} limiters only, not to ${limiter}`,
      );
    const least = limiter === 'token-bucket' ? 1 : 0;
    if (!(Number.isInteger(options.burst) && options.burst >= least))
      throw new InputError(`burst must be a whole number >= ${least} for the ${limiter} limiter`);
  }
  if (options.countRefused && limiter !== 'sliding' && limiter !== 'sliding-counter')
    throw new InputError(
      `countRefused applies to the sliding and sliding-counter limiters only, not to ${limiter}`,
    );
  const longer = options.longerWindows ?? SERVER_DEFAULTS.longerWindows;
  if (!LONGER_WINDOWS.includes(longer))
    throw new InputError(`longerWindows must be one of ${LONGER_WINDOWS.join(', ')}`);
  // The other models keep their state in this process; sharing it would need them in Redis's Lua.
  if (options.quotaStore !== undefined && limiter !== 'fixed')
    throw new InputError(`limiter ${limiter} keeps its state in memory: only fixed works with a quotaStore`);
  if (options.quotaStore !== undefined && longer !== 'fixed')
    throw new InputError(
      `longerWindows ${longer} keeps its state in memory: only fixed works with a quotaStore`,
    );
}
