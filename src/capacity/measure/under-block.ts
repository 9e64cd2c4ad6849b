import { now, sleepUntil } from '../../client/clock.ts';
import type { Ramp } from '../discover/concurrency.ts';
import type { Exhausted } from '../discover/exhaust.ts';
import type { Look } from '../discover/look.ts';
import type { SlowDownWatch } from '../discover/slow-down.ts';
import type { Family, Pace } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';
import type { BlockProbe } from './block.ts';
import type { PhasesMeasured } from './measured.ts';
import type { PacedPhase } from './paced-window.ts';
import { announced, type Recovery } from './recovery.ts';

/** What the rate under a block needs of the phases (phases.ts): the key's client and its pacing. */
export interface UnderBlockProbe {
  client: ProbeClient;
  windowMs: number;
  stalled: () => boolean;
  signal: AbortSignal | undefined;
  paced: (
    anchor: number,
    pace: Pace,
    firstIndex: number,
    infeasible: string | undefined,
    first?: ProbeReply,
  ) => Promise<PacedPhase>;
}

/**
 * A limiter that blocks the key at its first excess: its return after an excess is hidden behind
 * the block, and measuring it would cost another block. Its rate is measured short of the next
 * one instead, from the first request after the block. A bucket (its told reset moved with each
 * request of the burst) is spent but for one request first, so that the plan-rate windows spaced
 * after it live on its refill alone (one request of credit: 5% over two windows of 10). A window,
 * or a limiter that tells nothing, is paced from that first request as the plan says: a window
 * spent at once would refuse the next request and block again. Admitted whole, the windows are a
 * rate kept for ever, reported beside the block; a refusal among them says it is slower, and
 * nothing is claimed.
 */
export async function rateUnderBlock(
  probe: UnderBlockProbe,
  o: {
    look: Look;
    exhausted: Exhausted;
    exhaustMs: number;
    block: BlockProbe;
    slowDown: SlowDownWatch;
    ramp: Ramp;
    infeasible: string | undefined;
  },
): Promise<PhasesMeasured> {
  const client = probe.client;
  client.quietBackoff = 'window';
  client.shots = undefined;
  const resets = new Set(o.exhausted.samples.flatMap((s) => (s.reset === null ? [] : [s.reset])));
  const told: Family = resets.size === 0 ? 'unknown' : resets.size > 1 ? 'spacing' : 'window';
  let index = o.exhausted.sent + 2;
  await sleepUntil(client.pauseUntil + 1, probe.signal);
  const first = probe.signal?.aborted || probe.stalled() ? undefined : await client.request(index++);
  const back = first && admitted(first) ? first : undefined;
  const spend = back && told === 'spacing' ? Math.max(0, o.exhausted.accepted - 2) : 0;
  const spent = await Promise.all(Array.from({ length: spend }, () => client.request(index++)));
  const whole = back !== undefined && spent.every((r) => admitted(r));
  const refusedAgain = 'the key was refused again after its block';
  const paced =
    back && spend === 0
      ? await probe.paced(back.sentAt, 'spaced', index, o.infeasible, back)
      : await probe.paced(now(), 'spaced', index, whole ? o.infeasible : refusedAgain);
  const admittedPaced = paced.acceptedPerWindow.reduce((a, b) => a + b, 0);
  const kept = whole && paced.rateLimited === 0 && admittedPaced > 0;
  const spanMs = paced.acceptedPerWindow.length * probe.windowMs;
  const recovery: Recovery = {
    ...announced(o.exhausted),
    probes: (first ? 1 : 0) + spend,
    back,
    atOnce: null,
    remainingAfterTenth: null,
    wholeAgainAt: 0,
    nextIndex: index + paced.sent,
  };
  return {
    ...o,
    paced,
    recovery,
    family: kept ? told : 'unknown',
    atOnceFrom: 'counted',
    search: undefined,
    returnRangeMs: null,
    dailyAnchor: Math.max(paced.next, now()),
    ...(kept ? { underBlock: { intervalMs: spanMs / admittedPaced, burst: o.exhausted.accepted - 1 } } : {}),
  };
}
