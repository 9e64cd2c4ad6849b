import { QUOTA_FIELDS, type RateLimitView } from '../../api/rate-limit-dialect.ts';

/**
 * One response's quota in the terms the checks compare, whatever the dialect: Reset as a Unix time
 * in seconds, which also names the window (with the Limit), and how far it may be off.
 */
export interface Quota {
  limit: number | undefined;
  remaining: number | undefined;
  /**
   * Unix seconds. The seed's Reset is the server's own figure; any other is rounded to the second
   * (a delay once added to the receive time), so that the responses of one window mostly name it
   * alike: a server may derive even milliseconds from a delay of whole seconds.
   */
  reset: number | undefined;
  /**
   * Seconds the true reset may lie before `reset`, beyond the one second any Reset is rounded up by:
   * 0 for the seed's; the half second `reset` was rounded by; for a delay, also the request's round
   * trip (the server read its clock at some moment in it).
   */
  slack: number;
}

/** Built once per response: no header is parsed here, the view has them. */
export function quotaOf(view: RateLimitView, attempt: { sentAt: number; receivedAt: number }): Quota {
  const { limit, remaining, resetSeconds } = view;
  if (resetSeconds === undefined) return { limit, remaining, reset: undefined, slack: 0 };
  // The view's delay was measured from the receive time (the client reads it then, as does the recorder).
  const at = attempt.receivedAt / 1000 + resetSeconds;
  switch (view.dialect) {
    case 'seed':
      // Rounded back to the header's integer: the window's name must not depend on float residue.
      return { limit, remaining, reset: Math.round(at), slack: 0 };
    case 'unix-ms':
      return { limit, remaining, reset: Math.round(at), slack: 0.5 };
    default:
      return {
        limit,
        remaining,
        reset: Math.round(at),
        slack: 0.5 + Math.max(0, attempt.receivedAt - attempt.sentAt) / 1000,
      };
  }
}

/** Until when (epoch ms) the window a response named is certainly still open. */
export function openUntilMs(reset: number, slack: number): number {
  return (reset - 1 - slack) * 1000;
}

/** The field that told `remaining`, for messages (the seed's name when none did). */
export function remainingField(view: RateLimitView): string {
  return QUOTA_FIELDS[view.dialect === 'none' ? 'seed' : view.dialect].remaining;
}

/**
 * A window's Reset for a person: the seed's own figure (as its messages always said it), else the
 * instant, to the second, that named the window.
 */
export function resetLabel(reset: number, view: Pick<RateLimitView, 'dialect'>): string {
  if (view.dialect === 'seed' || view.dialect === 'none') return `Reset ${reset}`;
  return `reset at ${new Date(reset * 1000).toISOString().replace('.000Z', 'Z')} (${QUOTA_FIELDS[view.dialect].reset})`;
}

/** A response's own Reset for a person: the figure it sent, absolute or a delay. */
export function shownReset(view: RateLimitView, nowSeconds: number): string {
  const delay = view.resetSeconds;
  if (delay === undefined) return 'no Reset';
  switch (view.dialect) {
    case 'seed':
    case 'none':
      return `Reset ${Math.round(nowSeconds + delay)}`;
    case 'unix-ms':
      return `Reset ${Math.round((nowSeconds + delay) * 1000)}`;
    default:
      return `Reset in ${delay} s (${QUOTA_FIELDS[view.dialect].reset})`;
  }
}
