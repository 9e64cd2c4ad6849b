import type { RateWindow } from '../../api/plans.ts';
import { sleepUntil } from '../../client/clock.ts';
import type { Block } from '../../result/capacity-types.ts';
import type { Exhausted } from '../discover/exhaust.ts';
import { HEADER_GRANULARITY_MS } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** What the block probe found: the block, or why the long wait was not one. */
export interface BlockProbe {
  block: Block | undefined;
  evidence: string;
  /** The request inside the block, refused: where it prolonged the block, its wait is the one to judge the return by. */
  knock?: ProbeReply;
}

/** A wait no window of `windowMs` tells (whole-second headers and the probe's guard allowed for). */
export const longerThanWindow = (waitMs: number, windowMs: number, guardMs: number): boolean =>
  waitMs > windowMs + HEADER_GRANULARITY_MS + guardMs;

/** Why a wait longer than the window stopped the probe: past --max-wait, or no block's. */
export function stallReason(waitMs: number, maxWaitMs: number, window: RateWindow): string {
  const told = `a 429 announced a wait of ${Math.round(waitMs / 100) / 10} s`;
  return waitMs > maxWaitMs
    ? `${told}, longer than --max-wait (${Math.round(maxWaitMs / 1000)} s): a longer quota (the day's?) is spent or the key is blocked, and the probe stopped rather than wait`
    : `${told}, longer than the ${window.seconds} s ${window.name} window: a longer quota (the day's?) is spent, and the probe stopped rather than wait`;
}

/**
 * The window's excess refused with a wait longer than the window, within --max-wait: a block,
 * probed and waited out (probeBlock). A 429 before the window's limit was reached is a longer
 * quota's, and one past --max-wait is not waited for: the probe's stall stops it at either.
 */
export async function blockAfter(
  client: ProbeClient,
  exhausted: Exhausted,
  o: {
    window: RateWindow;
    guardMs: number;
    maxWaitMs: number;
    log?: (line: string) => void;
    signal?: AbortSignal;
  },
): Promise<BlockProbe | undefined> {
  const refusal = exhausted.refusal;
  const wait = refusal?.retryAfterMs;
  if (!refusal || wait === undefined || o.signal?.aborted) return undefined;
  if (!longerThanWindow(wait, o.window.seconds * 1000, o.guardMs)) return undefined;
  if (exhausted.accepted < o.window.limit || wait > o.maxWaitMs) return undefined;
  o.log?.(
    `the 429 at the window's first excess told a wait of ${seconds(wait)} s, longer than the window: probed as a block and waited out (within --max-wait)`,
  );
  return probeBlock(client, refusal, {
    excess: exhausted.accepted + 1 - o.window.limit,
    maxWaitMs: o.maxWaitMs,
    index: exhausted.sent + 1,
    signal: o.signal,
  });
}

/** The refusal the quota's return is judged by: a block the probe's own request prolonged, by what that request was told. */
export function returnJudgedBy(exhausted: Exhausted, block: BlockProbe | undefined): Exhausted {
  return block?.block?.extendedByProbes && block.knock ? { ...exhausted, refusal: block.knock } : exhausted;
}

/**
 * The window's first excess was refused with a wait longer than the window (and within
 * `--max-wait`): a block, which a proxy or a limiter's `blockDuration` applies to a key after an
 * excess, rather than the window's own return. One request halfway through tells whether a request
 * inside the block prolongs it (the one the verdict can afford: it is sent inside a Retry-After on
 * purpose, as the ban probe's are, and counts as no violation); then the block is waited out, so
 * that the quota's return is measured after it as after any refusal.
 */
export async function probeBlock(
  client: ProbeClient,
  refusal: ProbeReply,
  o: { excess: number; maxWaitMs: number; index: number; signal?: AbortSignal },
): Promise<BlockProbe> {
  const told = refusal.retryAfterMs ?? 0;
  const end = refusal.receivedAt + told;
  await sleepUntil(refusal.receivedAt + told / 2, o.signal);
  const block = { seconds: seconds(told), afterExcessOf: o.excess, extendedByProbes: null };
  if (o.signal?.aborted) return { block, evidence: blockEvidence(block) };
  const knock = await client.request(o.index, true);
  if (admitted(knock))
    return {
      block: undefined,
      evidence: `a 429 told a wait of ${seconds(told)} s, but a request halfway through it was admitted: no block`,
    };
  const knockEnd = knock.receivedAt + (knock.retryAfterMs ?? 0);
  // A Retry-After in whole seconds may end up to one later than the truth, each time it is told.
  const extended = knockEnd > end + HEADER_GRANULARITY_MS + told * 0.05;
  const found: Block = { ...block, extendedByProbes: extended };
  // Waited out here, as far as --max-wait goes: the phases after it then find no wait longer than a window.
  if (client.pauseUntil - refusal.receivedAt <= o.maxWaitMs)
    await sleepUntil(client.pauseUntil + 1, o.signal);
  return { block: found, evidence: blockEvidence(found), knock };
}

export function blockEvidence(b: Block): string {
  const knock =
    b.extendedByProbes === null
      ? ''
      : b.extendedByProbes
        ? '; a request inside it prolonged it'
        : '; a request inside it did not prolong it';
  return `blocks a key ${b.seconds} s at its ${b.afterExcessOf === 1 ? 'first excess' : `excess of ${b.afterExcessOf}`}${knock}`;
}

/** The block as measured to the quota's return: the excess's refusal to the first admitted answer after it. */
export function measuredBlock(b: Block, refusal: ProbeReply, back: ProbeReply | undefined): Block {
  if (!back || b.extendedByProbes) return b;
  return { ...b, seconds: seconds(Math.max(0, back.sentAt - refusal.receivedAt)) || b.seconds };
}
