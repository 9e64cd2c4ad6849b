import type { CapacityHeaderSample } from '../../result/capacity-types.ts';
import { EXCESS_BOUND } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply, refused } from '../probe-client.ts';

export interface Exhausted {
  sent: number;
  accepted: number;
  /** The first refusal by send order, if one came within the bound. */
  refusal: ProbeReply | undefined;
  /** The last answer by send order. */
  last: ProbeReply | undefined;
  /** The first request's send time: the window (or the bucket's drain) began then. */
  startedAt: number | undefined;
  /** The rate-limit fields of every answer, by send order. */
  samples: CapacityHeaderSample[];
}

/** A reset to the ms: a seconds-until dialect read at a sub-ms clock gives long fractions. */
const toMs = (unixSeconds: number | undefined) =>
  unixSeconds === undefined ? null : Math.round(unixSeconds * 1000) / 1000;

/** A burst with nothing sent yet; `startedAt` the first request's send, when one was sent already. */
export const noBurst = (startedAt?: number): Exhausted => ({
  sent: 0,
  accepted: 0,
  refusal: undefined,
  last: undefined,
  startedAt,
  samples: [],
});

/** One answer into the burst's account: its sample, its admission, the first refusal by send order. */
export function countAnswer(out: Exhausted, r: ProbeReply): void {
  out.startedAt = Math.min(out.startedAt ?? r.sentAt, r.sentAt);
  out.samples.push(sampleOf(r));
  if (admitted(r)) out.accepted++;
  else if (refused(r) && (!out.refusal || r.index < out.refusal.index)) out.refusal = r;
  if (!out.last || r.index > out.last.index) out.last = r;
}

/** An answer's rate-limit fields, as the report lists them. */
export const sampleOf = (r: ProbeReply): CapacityHeaderSample => ({
  request: r.index,
  status: r.status,
  limit: r.rateLimit.limit ?? null,
  remaining: r.rateLimit.remaining ?? null,
  reset: toMs(r.rateLimit.reset),
});

/**
 * One window spent as fast as the gate allows, until the first refusal or `limit + 3` requests.
 * The gate holds concurrency to what the window has left, so near its end one request is in
 * flight and the first 429 leaves nothing else queued. `first`, when given, is the answer to a
 * request already sent for this window: it counts as request 1.
 */
export async function exhaustWindow(
  client: ProbeClient,
  limit: number,
  signal?: AbortSignal,
  first?: ProbeReply,
  o: {
    /** Told every answer: true stops the sending (a limiter that delays rather than refuses). */
    halt?: (r: ProbeReply) => boolean;
    /** The burst the concurrency probe began from rest, which this one carries on. */
    prior?: Exhausted;
  } = {},
): Promise<Exhausted> {
  const { halt, prior } = o;
  // `prior`: the burst the concurrency probe began from rest, which this one carries on.
  const out: Exhausted = prior ? { ...prior, samples: [...prior.samples] } : noBurst(first?.sentAt);
  let known: number | undefined;
  let halted = false;
  for (const sample of out.samples)
    if (sample.remaining !== null) known = Math.min(known ?? sample.remaining, sample.remaining);
  const take = (r: ProbeReply) => {
    if (halt?.(r)) halted = true;
    countAnswer(out, r);
    if (r.rateLimit.remaining !== undefined)
      known = known === undefined ? r.rateLimit.remaining : Math.min(known, r.rateLimit.remaining);
  };
  if (first) {
    out.sent = 1;
    take(first);
  }
  const pending: Promise<void>[] = [];
  // The concurrency probe's refusals are not the burst's, yet took their numbers.
  let index = Math.max(out.sent, ...out.samples.map((s) => s.request));
  while (out.sent < limit + EXCESS_BOUND && !out.refusal && !halted && !signal?.aborted) {
    await client.slot(() => known);
    if (out.refusal || halted) break;
    out.sent++;
    index++;
    const request = client.request(index);
    pending.push(request.then(take));
  }
  await Promise.all(pending);
  out.samples.sort((a, b) => a.request - b.request);
  // Requests sent together are answered out of order (a refusal before the upstream's answers): the
  // rate search replays them as the limiter saw them, by the time each was written.
  client.shots?.sort((a, b) => a.at - b.at);
  return out;
}
