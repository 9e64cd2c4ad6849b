import type { LimiterModelName } from './limiter-models.ts';

/**
 * The limiter algorithms a client meets, by the names capacity reports them under: a fixed window
 * (the seed's reading of X-RateLimit-Reset), a sliding window (log or counter), a token bucket
 * (burst, then a steady refill), and GCRA, the leaky bucket as a meter (nginx `limit_req`, Envoy,
 * most gateways), which rejects a request that comes sooner than 1/rate after the one before beyond
 * its burst; and a concurrency limit (nginx `limit_conn`, Stripe's concurrency limiter, GitHub's
 * secondary limits), which refuses a request while too many of the key's are in flight, whatever
 * the rate.
 */
export const LIMITER_KINDS = ['fixed-window', 'sliding-window', 'token-bucket', 'gcra', 'concurrency'] as const;
export type LimiterKind = (typeof LIMITER_KINDS)[number];

/** Kinds whose rule binds between two sends, not only over a window: the client keeps a gap. */
export const isSpacingLimiter = (kind: LimiterKind): boolean => kind === 'token-bucket' || kind === 'gcra';

/** The reference server's `--limiter` models by the names capacity reports. */
export const KIND_OF_MODEL: Readonly<Record<LimiterModelName, LimiterKind>> = {
  fixed: 'fixed-window',
  sliding: 'sliding-window',
  'token-bucket': 'token-bucket',
  gcra: 'gcra',
};
