import { InputError } from './input-error.ts';
import type { LimiterModelName } from './limiter-models.ts';

/**
 * The limiter algorithms a client meets, by the names capacity reports them under: a fixed window
 * (the seed's reading of X-RateLimit-Reset), a sliding window (a log), a sliding counter (the
 * previous period's count weighted in, as gateways and CDNs compute it), a token bucket (burst,
 * then a steady refill), and GCRA, the leaky bucket as a meter (nginx `limit_req`, Envoy, most
 * gateways), which rejects a request that comes sooner than 1/rate after the one before beyond its
 * burst; and a concurrency limit (nginx `limit_conn`, Stripe's concurrency limiter, GitHub's
 * secondary limits), which refuses a request while too many of the key's are in flight, whatever
 * the rate.
 */
export const LIMITER_KINDS = [
  'fixed-window',
  'sliding-window',
  'sliding-counter',
  'token-bucket',
  'gcra',
  'concurrency',
] as const;
export type LimiterKind = (typeof LIMITER_KINDS)[number];

/** Kinds whose rule binds between two sends, not only over a window: the client keeps a gap. */
export const isSpacingLimiter = (kind: LimiterKind): boolean => kind === 'token-bucket' || kind === 'gcra';

/**
 * Kinds a client named them for paces by the plan's gap between any two sends: the spacing kinds,
 * and a sliding counter, which admits the plan's rate evenly spaced for ever, while a burst after a
 * busy period meets the previous period's weight.
 */
export const pacedByGap = (kind: LimiterKind): boolean =>
  isSpacingLimiter(kind) || kind === 'sliding-counter';

/** The reference server's `--limiter` models by the names capacity reports. */
export const KIND_OF_MODEL: Readonly<Record<LimiterModelName, LimiterKind>> = {
  fixed: 'fixed-window',
  sliding: 'sliding-window',
  'sliding-counter': 'sliding-counter',
  'token-bucket': 'token-bucket',
  gcra: 'gcra',
};

/** `--limiter` as given: a kind, and for `concurrency:N` the key's requests in flight at most. */
export interface LimiterGiven {
  kind: LimiterKind;
  maxInFlight?: number;
}

/** `gcra`, `fixed-window`, ..., `concurrency` (learned) or `concurrency:4` (given). */
export function parseLimiter(text: string, flag: string): LimiterGiven {
  const [kind, n, ...rest] = text.trim().split(':');
  if (!(LIMITER_KINDS as readonly string[]).includes(kind ?? ''))
    throw new InputError(
      `${flag} '${text}': want one of ${LIMITER_KINDS.join(', ')} (concurrency:N for a known limit)`,
    );
  if (n === undefined) return { kind: kind as LimiterKind };
  if (kind !== 'concurrency')
    throw new InputError(
      `${flag} '${text}': only concurrency takes a number, the requests in flight at most (e.g. concurrency:4)`,
    );
  const given = [n, ...rest].join(':');
  const maxInFlight = Number(given);
  if (!/^\d+$/.test(given) || maxInFlight < 1)
    throw new InputError(
      `${flag} '${text}': the requests in flight at most must be a whole number >= 1, not '${given}' (e.g. concurrency:4)`,
    );
  return { kind: 'concurrency', maxInFlight };
}
