import { now, sleepUntil } from '../client/clock.ts';
import { admitted, type ProbeClient, type ProbeReply } from './probe-client.ts';

/** Share of a window its requests are spread over: the rest absorbs timer and event-loop lag. */
export const SPREAD = 0.9;

export interface PacedWindow {
  sent: number;
  accepted: number;
  rateLimited: number;
  /** Distinct X-RateLimit-Reset values among the admitted answers. */
  resets: Set<number>;
  /** The first answer: the target's window began before it. */
  firstAnsweredAt: number | undefined;
  /** The first refusal (429 or 403), if any. */
  refusal: ProbeReply | undefined;
  /** Every admitted answer, in arrival order (the daily walk reads their headers). */
  answers: ProbeReply[];
}

/**
 * `count` requests evenly over 90% of a window from `anchor`, as a client paced at the plan rate
 * sends them. The window stops at its first refusal: the target has shown a limit below the plan's,
 * and sending the rest would only pile requests beyond it.
 */
export async function pacedWindow(
  client: ProbeClient,
  o: { anchor: number; count: number; windowMs: number; firstIndex: number; signal?: AbortSignal },
): Promise<PacedWindow> {
  const out: PacedWindow = {
    sent: 0,
    accepted: 0,
    rateLimited: 0,
    resets: new Set(),
    firstAnsweredAt: undefined,
    refusal: undefined,
    answers: [],
  };
  let known: number | undefined;
  const spacing = (o.windowMs * SPREAD) / Math.max(1, o.count);
  const pending: Promise<void>[] = [];
  for (let j = 0; j < o.count && !o.signal?.aborted; j++) {
    await sleepUntil(o.anchor + j * spacing, o.signal);
    await client.slot(() => known);
    if (out.refusal || o.signal?.aborted) break;
    const index = o.firstIndex + out.sent++;
    pending.push(
      client.request(index).then((r) => {
        if (admitted(r.status)) {
          out.accepted++;
          out.answers.push(r);
          if (r.rateLimit.reset !== undefined) out.resets.add(r.rateLimit.reset);
        } else if (r.status === 429 || r.status === 403) {
          out.rateLimited++;
          if (!out.refusal || r.index < out.refusal.index) out.refusal = r;
        }
        if (r.rateLimit.remaining !== undefined)
          known = known === undefined ? r.rateLimit.remaining : Math.min(known, r.rateLimit.remaining);
        // The server's window began when this first request arrived: before it was answered.
        out.firstAnsweredAt ??= r.receivedAt;
      }),
    );
  }
  await Promise.all(pending);
  return out;
}

/** When the next paced window may start: a window and a guard after this one's first answer, never inside a pause. */
export function nextAnchor(client: ProbeClient, w: PacedWindow, anchor: number, windowMs: number): number {
  const guard = Math.max(10, windowMs * 0.05);
  return Math.max((w.firstAnsweredAt ?? anchor) + windowMs + guard, client.pauseUntil, now());
}
