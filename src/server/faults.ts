import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Plan, RateWindow } from '../api/plans.ts';
import { seededRandom } from '../api/random.ts';
import { RATE_LIMIT_HEADER } from '../api/rate-limit-headers.ts';
import type { LimitDecision } from './rate-limiter.ts';

export const OMITTABLE_HEADERS = [
  RATE_LIMIT_HEADER.limit,
  RATE_LIMIT_HEADER.remaining,
  RATE_LIMIT_HEADER.reset,
] as const;
export type OmittableHeader = (typeof OMITTABLE_HEADERS)[number];

/**
 * Ways the reference server can misbehave on purpose, so that every check of the toolkit can be
 * shown to fail when it should. All off by default. Delays are real time: `timeScale` compresses
 * the rate-limit windows, not the server's latency.
 */
export interface FaultOptions {
  /** Added to every response, in ms. */
  latencyMs?: number;
  /** Uniformly random extra latency in [0, jitterMs), in ms. */
  jitterMs?: number;
  /** Periodic stalls: requests arriving in the first `forMs` of every `everyMs` wait until it ends. */
  stall?: { everyMs: number; forMs: number };
  /** Share (0..1) of requests answered 500 with an Error body. */
  errorRate?: number;
  /** Share (0..1) of connections reset (TCP RST) instead of answered. */
  resetRate?: number;
  /** A rate-limit header left out of every response. */
  omitHeader?: OmittableHeader;
  /** Added to the true X-RateLimit-Remaining. */
  wrongRemaining?: number;
  /** X-RateLimit-Reset sent as seconds until the reset instead of a Unix time. */
  resetAsDelta?: boolean;
  /** 429 responses without Retry-After. */
  noRetryAfter?: boolean;
  /** The limiter lets this many extra requests through per window (headers still claim the plan's limit). */
  limiterLeak?: number;
  /** X-RateLimit-Remaining rises within a window: an even true value is sent as 2 more (at most the limit). */
  remainingRises?: boolean;
  /** X-RateLimit-Reset moves earlier as a window is used: the true reset plus Remaining seconds. */
  resetDrift?: boolean;
  /**
   * The headers describe the plan's longest window (its Limit, Remaining and Reset) even while a
   * shorter one is closer to exhaustion.
   */
  wrongWindowHeaders?: boolean;
  /** 429 while the quota remains: once half of the described window is used, until it resets. */
  early429?: boolean;
  /** Seconds added to Retry-After, which then ends that much after X-RateLimit-Reset. */
  retryAfterMismatch?: number;
  /** The first request of a key once a 429's Retry-After has elapsed is refused again. */
  rejectRetry?: boolean;
  /** 429 responses carry `Cache-Control: public, max-age=60`. */
  cacheable429?: boolean;
  /** The deprecated operation sends Deprecation and Sunset without `Link: <...>; rel="sunset"`. */
  noSunsetLink?: boolean;
  /**
   * X-RateLimit-Limit is none of the plan's limits: the described window's limit plus one (or the
   * next value above it that is no limit of the plan). Remaining stays the true one, within bounds.
   */
  wrongLimit?: boolean;
  /** Error bodies name a status other than the HTTP status: 500 on a 4xx, 400 on a 5xx. */
  errorBodyStatus?: boolean;
  /**
   * A 429 of the longest window (the day) announces the shortest window's wait: Retry-After and
   * X-RateLimit-Reset a minute window from now, although the day's quota is spent until the day resets.
   */
  dayRetryAsMinute?: boolean;
  /**
   * JSON bodies declare `Content-Type: application/x-json`: not application/json, although a client
   * that looks for "json" in the type still parses them (so only the content-type rule breaks).
   */
  xJsonContentType?: boolean;
  /** The deprecated operation sends Deprecation as an HTTP-date instead of RFC 9745's `@<unix-seconds>`. */
  badDeprecation?: boolean;
  /** Pets in 2xx bodies carry a `status` outside the document's enum (`lost`). */
  schemaViolation?: boolean;
  /**
   * Tenant isolation broken as by a gateway that keys its limiter on the plan instead of the key:
   * every key of a plan draws from one bucket per window, of the plan's limit times the number of
   * keys the server has on that plan, and no key's own limit is enforced. The headers still tell each
   * key its own count (Remaining 0 once it has used its own limit, while it goes on being admitted),
   * so a key that keeps to its own quota is refused 429 with quota left by its count once a
   * neighbour of its plan has spent the others' share. The bucket counts fixed windows whatever the
   * limiter; requests without a valid key keep their own per-address limit; the ban stays per key.
   * A number sizes each plan's bucket at that many keys' worth instead of all its keys (a gateway
   * sized for the traffic expected, not for every customer at full quota): a bucket that compliant
   * tenants below their quotas fit, and that an abusive neighbour then spends.
   */
  sharedBucket?: boolean | number;
  /** Seed of the random choices (latency jitter, 500s, resets), for repeatable runs. */
  seed?: number;
}

export const FAULT_NAMES = [
  'latencyMs',
  'jitterMs',
  'stall',
  'errorRate',
  'resetRate',
  'omitHeader',
  'wrongRemaining',
  'resetAsDelta',
  'noRetryAfter',
  'limiterLeak',
  'remainingRises',
  'resetDrift',
  'wrongWindowHeaders',
  'early429',
  'retryAfterMismatch',
  'rejectRetry',
  'cacheable429',
  'noSunsetLink',
  'wrongLimit',
  'errorBodyStatus',
  'xJsonContentType',
  'badDeprecation',
  'schemaViolation',
  'dayRetryAsMinute',
  'sharedBucket',
] as const satisfies readonly (keyof FaultOptions)[];

// Unref'd: an injected delay still pending must not keep a closed server's process alive.
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class FaultInjector {
  private readonly random: () => number;
  private readonly startedAt = Date.now();
  readonly active: boolean;
  readonly options: FaultOptions;

  constructor(options: FaultOptions = {}) {
    this.options = options;
    this.random = seededRandom(options.seed);
    this.active = FAULT_NAMES.some((name) => {
      const value = options[name];
      return value !== undefined && value !== false && value !== 0;
    });
  }

  /** Delays that happen before the server looks at the request. */
  async delay(): Promise<void> {
    const { stall, latencyMs = 0, jitterMs = 0 } = this.options;
    let wait = latencyMs + (jitterMs > 0 ? this.random() * jitterMs : 0);
    if (stall && stall.everyMs > 0) {
      const intoPeriod = (Date.now() - this.startedAt) % stall.everyMs;
      if (intoPeriod < stall.forMs) wait += stall.forMs - intoPeriod;
    }
    if (wait > 0) await sleep(wait);
  }

  /** Resets the connection (the client sees ECONNRESET) and returns true, for a share of requests. */
  maybeReset(request: FastifyRequest, reply: FastifyReply): boolean {
    const rate = this.options.resetRate ?? 0;
    if (rate <= 0 || this.random() >= rate) return false;
    reply.hijack();
    request.raw.socket.resetAndDestroy();
    return true;
  }

  shouldFail(): boolean {
    const rate = this.options.errorRate ?? 0;
    return rate > 0 && this.random() < rate;
  }

  /** wrongWindowHeaders: the fault's own count of the longest window, per limited key. */
  private readonly longest = new Map<string, { window: RateWindow; start: number; used: number }>();
  /** rejectRetry: per limited key, when the last (true) 429 said the quota is back. */
  private readonly retryAt = new Map<string, number>();

  /**
   * The limiter's decision as the faults that lie about the quota change it. `id` names the limited
   * key (or client address), `plan` its plan; `now` is epoch ms.
   */
  adjustDecision(id: string, plan: Plan, decision: LimitDecision, now: number): LimitDecision {
    const d = this.adjustQuota(id, plan, decision, now);
    if (!this.options.wrongLimit) return d;
    let limit = d.limit + 1;
    while (plan.windows.some((w) => w.limit === limit)) limit++;
    return { ...d, limit };
  }

  private adjustQuota(id: string, plan: Plan, decision: LimitDecision, now: number): LimitDecision {
    const o = this.options;
    let d = decision;
    if (o.dayRetryAsMinute && d.outcome === 'rate_limited' && plan.windows.length > 1) {
      const seconds = plan.windows.map((w) => w.seconds);
      const longest = plan.windows.find((w) => w.seconds === Math.max(...seconds)) as RateWindow;
      if (d.limit === longest.limit) {
        const at = now + Math.min(...seconds) * 1000;
        return { ...d, resetAt: at, retryAt: at };
      }
    }
    if (o.rejectRetry) {
      if (d.outcome === 'rate_limited' && d.retryAt !== undefined) {
        this.retryAt.set(id, d.retryAt);
      } else if (d.outcome === 'allowed') {
        const back = this.retryAt.get(id);
        if (back !== undefined && now >= back) {
          this.retryAt.delete(id);
          // Retry-After up to this window's reset, consistent with Reset: the retry after it succeeds.
          return { ...d, outcome: 'rate_limited', remaining: 0, retryAt: d.resetAt };
        }
      }
    }
    if (d.outcome !== 'allowed') return d;
    if (o.wrongWindowHeaders && plan.windows.length > 1) {
      let window = plan.windows[0] as RateWindow;
      for (const w of plan.windows) if (w.seconds > window.seconds) window = w;
      let count = this.longest.get(id);
      if (!count || count.window !== window || now >= count.start + window.seconds * 1000) {
        count = { window, start: now, used: 0 };
        this.longest.set(id, count);
      }
      count.used++;
      d = {
        ...d,
        limit: window.limit,
        remaining: Math.max(0, window.limit - count.used),
        resetAt: count.start + window.seconds * 1000,
      };
    }
    if (o.early429 && d.remaining < d.limit / 2) {
      return { ...d, outcome: 'rate_limited', remaining: 0, retryAt: d.resetAt };
    }
    if (o.remainingRises && d.remaining % 2 === 0)
      d = { ...d, remaining: Math.min(d.limit, d.remaining + 2) };
    if (o.resetDrift) d = { ...d, resetAt: d.resetAt + d.remaining * 1000 };
    return d;
  }
}

/** schemaViolation: a pet (an object with a name and a status) gets a status outside the enum; copies, never the store's. */
export function violateSchema(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(violateSchema);
  if (body && typeof body === 'object' && 'name' in body && 'status' in body)
    return { ...body, status: 'lost' };
  return body;
}

/** errorBodyStatus: the status an Error body names instead of the HTTP status. */
export const wrongErrorStatus = (status: number): number => (status >= 500 ? 400 : 500);
