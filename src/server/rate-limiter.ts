import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { Plan, PlanTable, RateWindow } from '../api/plans.ts';
import {
  closest,
  type Factory,
  isLimiterResult,
  isRefusal,
  type LimiterChoice,
  latestRefusal,
  planWindows,
  type Refusal,
  takeAll,
  type WindowLimiter,
  type WindowState,
} from './window-limiters.ts';

/** What the limiter decided, in absolute times so that headers can be written from it later. */
export interface LimitDecision {
  outcome: 'allowed' | 'rate_limited' | 'banned';
  /** The window the headers describe: the one closest to running out (or the one that rejected). */
  limit: number;
  remaining: number;
  /**
   * Epoch ms at which that window's whole quota is back (for a ban: when the ban ends). Under a
   * fixed window that is its end; under the other models see src/api/limiter-models.ts.
   */
  resetAt: number;
  /** For rejections: epoch ms from which a retry can succeed. */
  retryAt?: number;
  /** The name of the window described, for the dialects that name policies. */
  policy?: string;
}

export interface BanPolicy {
  /** Requests a key may send after a 429 and before its Retry-After elapses; one more bans it. */
  after: number;
  /** Ban length in (already time-scaled) seconds. */
  seconds: number;
}

/**
 * `--block`: a key refused once is refused for this long (already time-scaled seconds), whatever its
 * windows say, as rate-limiter-flexible's `blockDuration` and several proxies do; Retry-After tells it.
 * A request during the block does not prolong it.
 */
export interface BlockPolicy {
  seconds: number;
}

/** A shared bucket's burst: n keys' worth (a GCRA admits its burst plus one at once). */
function poolBurst(choice: LimiterChoice, n: number): number | undefined {
  if (choice.name === 'gcra') return n * ((choice.burst ?? 0) + 1) - 1;
  return choice.burst === undefined ? undefined : choice.burst * n;
}

/** The key under which a plan's shared bucket (the sharedBucket fault) counts. */
const POOL_KEY = 'pool';

/**
 * Quotas per key and the temporary ban. The default algorithm is the fixed window, on
 * rate-limiter-flexible, so that its counts can live in Redis and be shared by several server
 * instances. `--limiter sliding|token-bucket|gcra` puts the plan's shortest window under that model
 * instead (in memory) and keeps fixed windows on the longer ones: those are quotas (a day's 1000),
 * while the short window sets the pace, and a model such as GCRA applied to the day would space
 * requests 86.4 s apart and bind long before the minute does. `--longer-windows sliding` makes the
 * longer ones below a day sliding logs, for APIs that keep several moving windows at once.
 *
 * Our documented choices where the seed is silent: a request rejected with 429 does not count
 * against any window (it is given back), and the headers describe the window with the fewest
 * requests left (on a tie, the one resetting later, because that is when the quota is truly back).
 *
 * State per key: one small record per window a key has used this window (rate-limiter-flexible's
 * memory store keeps a Map entry and one unref'd timer per record, all of one window's length in one
 * timer list, so adding one is O(1)); it is deleted when the window ends. Measured: some 0.9 KB per
 * key in use on two windows (9 MB for 10,000 keys), and no slower per request with 10,000 keys.
 */
export class PlanLimiter {
  /** Each plan's windows, the model's last; built once: nothing is looked up by name per request. */
  private readonly limiters = new Map<Plan, WindowLimiter[]>();
  /** sharedBucket fault: each plan's one bucket for all its keys. */
  private readonly pools = new Map<Plan, WindowLimiter[]>();
  private readonly strikes: RateLimiterAbstract | undefined;
  private readonly blocks: RateLimiterAbstract | undefined;
  private readonly block: BlockPolicy | undefined;
  private readonly ban: BanPolicy | undefined;

  constructor(
    plans: Readonly<PlanTable>,
    ban: BanPolicy | undefined,
    /** Fault injection: a limiter that lets this many extra requests through per window. */
    leak = 0,
    /** `--quota-store`: counts kept in Redis, so that several server instances enforce one limit. */
    redis?: Redis,
    choice: LimiterChoice = { name: 'fixed' },
    /**
     * The sharedBucket fault: plan name -> how many keys the server has on it. Each such plan's keys
     * draw from one bucket of that many times its limits (and burst), and their own limits only
     * count, for the headers.
     */
    sharedKeys?: Readonly<Record<string, number>>,
    block?: BlockPolicy,
  ) {
    this.ban = ban;
    if (redis && choice.name !== 'fixed')
      throw new Error(`the ${choice.name} limiter keeps its state in memory; only fixed windows use Redis`);
    // The window's length is in the prefix: instances at other time scales keep apart in one Redis.
    const limiter: Factory = (o) =>
      redis
        ? new RateLimiterRedis({ ...o, keyPrefix: `petstore-ref:${o.keyPrefix}`, storeClient: redis })
        : new RateLimiterMemory(o);
    for (const plan of Object.values(plans)) {
      this.limiters.set(plan, planWindows(plan, choice, leak, limiter));
      const n = sharedKeys?.[plan.name] ?? 0;
      if (n < 1) continue;
      const pool = { name: plan.name, windows: plan.windows.map((w) => ({ ...w, limit: w.limit * n })) };
      this.pools.set(
        plan,
        planWindows(pool, { ...choice, burst: poolBurst(choice, n) }, 0, limiter, 'pool:'),
      );
    }
    // One strike per 429; the first 429 is the one that tells the client, so `after + 1` strikes are
    // allowed and the next one blocks the key for the ban's length.
    this.strikes = ban
      ? limiter({
          keyPrefix: `strikes:${ban.seconds}`,
          points: ban.after + 1,
          duration: 1,
          blockDuration: ban.seconds,
        })
      : undefined;
    this.block = block;
    this.blocks = block
      ? limiter({ keyPrefix: `block:${block.seconds}`, points: 1, duration: block.seconds })
      : undefined;
  }

  /**
   * `plan` must be one of the table's plans (the same object). `pooled`: the key is an API key of
   * the plan, which the sharedBucket fault pools (a client address keeps its own limit).
   */
  async admit(key: string, plan: Plan, pooled = true): Promise<LimitDecision> {
    const limiters = this.limiters.get(plan);
    if (!limiters) throw new Error(`plan '${plan.name}' is not in the limiter's table`);
    const now = Date.now();
    const banned = await this.bannedUntil(key, now);
    if (banned !== undefined) {
      const first = plan.windows[0] as RateWindow;
      return { outcome: 'banned', limit: first.limit, remaining: 0, resetAt: banned, retryAt: banned };
    }
    const blocked = await this.blockedUntil(key);
    if (blocked !== undefined) {
      const first = plan.windows[0] as RateWindow;
      const decision = { limit: first.limit, remaining: 0, resetAt: now + blocked, retryAt: now + blocked };
      return this.strike(key, { outcome: 'rate_limited', ...decision, policy: first.name }, now);
    }
    const pool = pooled ? this.pools.get(plan) : undefined;
    if (pool) return this.admitPooled(key, limiters, pool, now);

    const taken = await takeAll(limiters, key, now);
    if (!Array.isArray(taken)) return this.reject(key, limiters, taken.by, taken.refusal, now);
    return allowed(closest(taken));
  }

  /**
   * sharedBucket: the plan's bucket decides; the key's own windows count it (never refusing: a spent
   * one stays at Remaining 0) so that the headers tell the key's own count, even on the 429.
   */
  private async admitPooled(
    key: string,
    limiters: readonly WindowLimiter[],
    pool: readonly WindowLimiter[],
    now: number,
  ): Promise<LimitDecision> {
    const drawn = await takeAll(pool, POOL_KEY, now);
    if (!Array.isArray(drawn)) {
      const { worst } = await latestRefusal(pool, POOL_KEY, drawn.by, drawn.refusal, now);
      const own: WindowState[] = [];
      for (const limiter of limiters) own.push(await limiter.peek(key, now));
      const told = closest(own);
      return this.strike(
        key,
        {
          outcome: 'rate_limited',
          limit: told.limit,
          remaining: told.remaining,
          resetAt: told.resetAt,
          retryAt: worst.retryAt,
          policy: told.window.name,
        },
        now,
      );
    }
    const states: WindowState[] = [];
    for (const limiter of limiters) {
      const result = await limiter.take(key, now);
      states.push(
        isRefusal(result)
          ? { window: limiter.window, limit: limiter.limit, remaining: 0, resetAt: result.resetAt }
          : result,
      );
    }
    return allowed(closest(states));
  }

  private async reject(
    key: string,
    limiters: readonly WindowLimiter[],
    rejectedBy: WindowLimiter,
    refusal: Refusal,
    now: number,
  ): Promise<LimitDecision> {
    const { worst, described } = await latestRefusal(limiters, key, rejectedBy, refusal, now);
    let retryAt = worst.retryAt;
    if (this.blocks && this.block) {
      await this.blocks.block(key, this.block.seconds);
      retryAt = Math.max(retryAt, now + this.block.seconds * 1000);
    }
    return this.strike(
      key,
      {
        outcome: 'rate_limited',
        limit: described.limit,
        remaining: 0,
        resetAt: Math.max(worst.resetAt, retryAt),
        retryAt,
        policy: described.window.name,
      },
      now,
    );
  }

  /** Counts a 429 against the key (never against its plan): past the ban's allowance it is banned. */
  private async strike(key: string, decision: LimitDecision, now: number): Promise<LimitDecision> {
    if (!this.strikes || decision.retryAt === undefined) return decision;
    try {
      // The strike count lives as long as this limited period, so a well-behaved client that
      // sends one request per period never accumulates strikes across periods.
      const seconds = Math.max(0.001, (decision.retryAt - now) / 1000);
      await this.strikes.consume(key, 1, { customDuration: seconds });
      return decision;
    } catch (error) {
      if (!isLimiterResult(error)) throw error;
      const until = now + error.msBeforeNext;
      return { ...decision, outcome: 'banned', resetAt: until, retryAt: until };
    }
  }

  /** Ms left of the key's block, if it is blocked. */
  private async blockedUntil(key: string): Promise<number | undefined> {
    const state = await this.blocks?.get(key);
    if (!state || state.consumedPoints <= 1 || state.msBeforeNext <= 0) return undefined;
    return state.msBeforeNext;
  }

  private async bannedUntil(key: string, now: number): Promise<number | undefined> {
    if (!this.strikes || !this.ban) return undefined;
    const state = await this.strikes.get(key);
    if (!state || state.consumedPoints <= this.ban.after + 1 || state.msBeforeNext <= 0) return undefined;
    return now + state.msBeforeNext;
  }
}

function allowed(chosen: WindowState): LimitDecision {
  return {
    outcome: 'allowed',
    limit: chosen.limit,
    remaining: chosen.remaining,
    resetAt: chosen.resetAt,
    policy: chosen.window.name,
  };
}
