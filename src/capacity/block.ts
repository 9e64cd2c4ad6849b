import { sleepUntil } from '../client/clock.ts';
import type { Block } from '../result/capacity-types.ts';
import { admitted, type ProbeClient, type ProbeReply } from './probe-client.ts';
import { HEADER_GRANULARITY_MS } from './verdict.ts';

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** What the block probe found: the block, or why the long wait was not one. */
export interface BlockProbe {
  block: Block | undefined;
  evidence: string;
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
  if (admitted(knock.status))
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
  return { block: found, evidence: blockEvidence(found) };
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
