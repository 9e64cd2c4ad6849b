import type { FastifyReply, FastifyRequest } from 'fastify';
import { seededRandom } from '../api/random.ts';
import { RATE_LIMIT_HEADER } from '../api/rate-limit-headers.ts';

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
] as const satisfies readonly (keyof FaultOptions)[];

// Unref'd: an injected delay still pending must not keep a closed server's process alive.
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class FaultInjector {
  private readonly random: () => number;
  private readonly startedAt = Date.now();
  readonly active: boolean;

  constructor(readonly options: FaultOptions = {}) {
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
}
