import { now, sleepUntil } from '../../client/clock.ts';
import type { Exhausted } from '../discover/exhaust.ts';
import { windowGuardMs } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';

const MAX_RECOVERY_PROBES = 8;

/** The quota's return after the burst's 429, as the report tells it. */
export interface Recovery {
  probes: number;
  /** Epoch ms Retry-After announced, and the reset, in the dialect the 429 spoke. */
  announcedRetryAt: number | null;
  announcedResetAt: number | null;
  /** The first admitted request after the 429. */
  back: ProbeReply | undefined;
  /** How many came back at once (Remaining of the first admitted + 1, or counted), null: unknown. */
  atOnce: number | null;
  /** Of `atOnce`, those admitted a moment later, each once a window had passed since the burst's request it replaced. */
  atOnceLate?: number;
  remainingAfterTenth: number | null;
  /** The last request's announced reset (epoch ms): the quota is whole again by then. */
  wholeAgainAt: number;
  nextIndex: number;
  /** Refusals the probe met within a window before the return (they may still be counted). */
  refusedBefore?: number;
}

/** Retry-After and the reset the 429 announced (the reset of the last answer when no 429 came). */
export function announced(exhausted: Exhausted): Pick<Recovery, 'announcedRetryAt' | 'announcedResetAt'> {
  const rejected = exhausted.refusal;
  const announcedRetryAt =
    rejected?.retryAfterMs !== undefined && rejected.hasRetryAfter
      ? rejected.receivedAt + rejected.retryAfterMs
      : null;
  const reset = (rejected ?? exhausted.last)?.rateLimit.reset;
  return { announcedRetryAt, announcedResetAt: reset === undefined ? null : reset * 1000 };
}

/**
 * The quota's return where the headers announce it: probed no sooner than Retry-After (or, without a
 * 429, the announced reset), then once more a tenth of a window later, for how fast it refills.
 */
export async function probeRecovery(
  client: ProbeClient,
  exhausted: Exhausted,
  o: { windowMs: number; stepMs: number; stalled: () => boolean; signal?: AbortSignal },
): Promise<Recovery> {
  const { announcedRetryAt, announcedResetAt } = announced(exhausted);
  const guard = windowGuardMs(o.windowMs);
  let probeAt = Math.max(
    announcedRetryAt ?? announcedResetAt ?? (exhausted.startedAt ?? now()) + o.windowMs + guard,
    client.pauseUntil,
    now(),
  );
  let probes = 0;
  let back: ProbeReply | undefined;
  let index = exhausted.sent;
  while (probes < MAX_RECOVERY_PROBES && !o.signal?.aborted && exhausted.sent > 0 && !o.stalled()) {
    await sleepUntil(probeAt + 1, o.signal);
    if (o.signal?.aborted) break;
    probes++;
    const r = await client.request(++index);
    if (admitted(r)) {
      back = r;
      break;
    }
    probeAt = Math.max(now() + o.stepMs, client.pauseUntil);
  }
  let remainingAfterTenth: number | null = null;
  let wholeAgainAt = back?.rateLimit.reset === undefined ? 0 : back.rateLimit.reset * 1000;
  if (back && !o.signal?.aborted) {
    await sleepUntil(now() + o.windowMs / 10, o.signal);
    const r = await client.request(++index);
    if (admitted(r)) remainingAfterTenth = r.rateLimit.remaining ?? null;
    if (admitted(r) && r.rateLimit.reset !== undefined) wholeAgainAt = r.rateLimit.reset * 1000;
  }
  const remaining = back?.rateLimit.remaining;
  return {
    probes,
    announcedRetryAt,
    announcedResetAt,
    back,
    atOnce: remaining === undefined ? null : remaining + 1,
    remainingAfterTenth,
    wholeAgainAt,
    nextIndex: index + 1,
  };
}

/**
 * The limit of the window that came back, to read the return's Remaining against: the one its
 * headers tell, unless they told another limit while it was exhausted. Limiters that enforce
 * several windows at once tell whichever is nearer to spent, and at the return that may be a longer
 * one (its Remaining then still counts the probe's earlier requests): the exhausted window's own
 * limit is what the burst admitted.
 */
export function returnedLimit(exhausted: Exhausted, back: ProbeReply | undefined): number {
  const told = back?.rateLimit.limit;
  const exhaustedTold = exhausted.last?.rateLimit.limit;
  if (told === undefined) return exhausted.accepted;
  return exhaustedTold === undefined || told === exhaustedTold ? told : exhausted.accepted;
}
