import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
import type { Plan, PlanTable, RateWindow } from '../api/plans.ts';

/** What the limiter decided, in absolute times so that headers can be written from it later. */
export interface LimitDecision {
  outcome: 'allowed' | 'rate_limited' | 'banned';
  /** The window the headers describe: the one closest to running out (or the one that rejected). */
  limit: number;
  remaining: number;
  /** Epoch ms at which that window resets (for a ban: when the ban ends). */
  resetAt: number;
  /** For rejections: epoch ms from which a retry can succeed. */
  retryAt?: number;
}

export interface BanPolicy {
  /** Requests a key may send after a 429 and before its Retry-After elapses; one more bans it. */
  after: number;
  /** Ban length in (already time-scaled) seconds. */
  seconds: number;
}

function isLimiterResult(value: unknown): value is RateLimiterRes {
  return typeof value === 'object' && value !== null && 'msBeforeNext' in value;
}

/**
 * Fixed-window quotas per key and the temporary ban, on rate-limiter-flexible so that the same
 * limiter can later move to its Redis store and be shared by several server instances.
 *
 * Our documented choices where the seed is silent: a request rejected with 429 does not count
 * against any window (it is given back), and the headers describe the window with the fewest
 * requests left (on a tie, the one resetting later, because that is when the quota is truly back).
 */
export class PlanLimiter {
  /** One limiter per window of each plan, built once: nothing is looked up by name per request. */
  private readonly limiters = new Map<Plan, RateLimiterAbstract[]>();
  private readonly strikes: RateLimiterAbstract | undefined;

  constructor(
    plans: Readonly<PlanTable>,
    private readonly ban: BanPolicy | undefined,
    /** Fault injection: a limiter that lets this many extra requests through per window. */
    private readonly leak = 0,
    /** `--quota-store`: counts kept in Redis, so that several server instances enforce one limit. */
    redis?: Redis,
  ) {
    // The window's length is in the prefix: instances at other time scales keep apart in one Redis.
    const limiter = (o: { keyPrefix: string; points: number; duration: number; blockDuration?: number }) =>
      redis
        ? new RateLimiterRedis({ ...o, keyPrefix: `petstore-ref:${o.keyPrefix}`, storeClient: redis })
        : new RateLimiterMemory(o);
    for (const plan of Object.values(plans)) {
      this.limiters.set(
        plan,
        plan.windows.map((w) =>
          limiter({
            keyPrefix: `${plan.name}:${w.name}:${w.seconds}`,
            points: w.limit + leak,
            duration: w.seconds,
          }),
        ),
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
  }

  /** `plan` must be one of the table's plans (the same object). */
  async admit(key: string, plan: Plan): Promise<LimitDecision> {
    const limiters = this.limiters.get(plan);
    if (!limiters) throw new Error(`plan '${plan.name}' is not in the limiter's table`);
    const now = Date.now();
    const banned = await this.bannedUntil(key, now);
    if (banned !== undefined) {
      const first = plan.windows[0] as RateWindow;
      return { outcome: 'banned', limit: first.limit, remaining: 0, resetAt: banned, retryAt: banned };
    }

    const results: { window: RateWindow; res: RateLimiterRes }[] = [];
    for (let i = 0; i < limiters.length; i++) {
      const limiter = limiters[i] as RateLimiterAbstract;
      const window = plan.windows[i] as RateWindow;
      try {
        results.push({ window, res: await limiter.consume(key) });
      } catch (error) {
        if (!isLimiterResult(error)) throw error;
        for (let j = 0; j <= i; j++) await (limiters[j] as RateLimiterAbstract).reward(key);
        return this.reject(key, plan, limiters, i, error, now);
      }
    }

    let chosen = results[0] as (typeof results)[number];
    for (const r of results) {
      const left = r.window.limit - r.res.consumedPoints;
      const chosenLeft = chosen.window.limit - chosen.res.consumedPoints;
      if (left < chosenLeft || (left === chosenLeft && r.res.msBeforeNext > chosen.res.msBeforeNext))
        chosen = r;
    }
    return {
      outcome: 'allowed',
      limit: chosen.window.limit,
      remaining: Math.max(0, chosen.window.limit - chosen.res.consumedPoints),
      resetAt: now + Math.max(0, chosen.res.msBeforeNext),
    };
  }

  private async reject(
    key: string,
    plan: Plan,
    limiters: RateLimiterAbstract[],
    rejectedBy: number,
    res: RateLimiterRes,
    now: number,
  ): Promise<LimitDecision> {
    // When several windows are spent, the quota is back only when the last of them resets.
    let retryAt = now + Math.max(0, res.msBeforeNext);
    let described = plan.windows[rejectedBy] as RateWindow;
    for (let i = 0; i < limiters.length; i++) {
      if (i === rejectedBy) continue;
      const other = plan.windows[i] as RateWindow;
      const state = await (limiters[i] as RateLimiterAbstract).get(key);
      if (state && state.consumedPoints >= other.limit + this.leak && now + state.msBeforeNext > retryAt) {
        retryAt = now + state.msBeforeNext;
        described = other;
      }
    }
    const decision: LimitDecision = {
      outcome: 'rate_limited',
      limit: described.limit,
      remaining: 0,
      resetAt: retryAt,
      retryAt,
    };
    if (!this.strikes) return decision;
    try {
      // The strike count lives as long as this limited period, so a well-behaved client that
      // sends one request per period never accumulates strikes across periods.
      await this.strikes.consume(key, 1, { customDuration: Math.max(0.001, (retryAt - now) / 1000) });
      return decision;
    } catch (error) {
      if (!isLimiterResult(error)) throw error;
      const until = now + error.msBeforeNext;
      return { outcome: 'banned', limit: described.limit, remaining: 0, resetAt: until, retryAt: until };
    }
  }

  private async bannedUntil(key: string, now: number): Promise<number | undefined> {
    if (!this.strikes || !this.ban) return undefined;
    const state = await this.strikes.get(key);
    if (!state || state.consumedPoints <= this.ban.after + 1 || state.msBeforeNext <= 0) return undefined;
    return now + state.msBeforeNext;
  }
}
