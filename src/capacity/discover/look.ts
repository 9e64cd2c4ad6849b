import { sleepUntil } from '../../client/clock.ts';
import { HEADER_GRANULARITY_MS } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply, type Shot } from '../probe-client.ts';

/**
 * The order the probe takes, from its first answer. A window (a reset about a window away) is
 * measured at the plan rate first and exhausted after, on a window of its own. A limiter that says
 * nothing, or whose reset stays short of half a window however fresh the key (it refills
 * continuously), is measured the other way round: its burst from rest, its return and its rate,
 * and only then the plan rate, at a spacing it admits.
 */
export interface Look {
  order: 'window-first' | 'model-first';
  /** The answer that begins what follows (the paced window's or the burst's first request). */
  first: ProbeReply;
  /** Requests sent before `first` that count for nothing (a window about to end was waited out). */
  discarded: number;
  evidence: string[];
}

const untilReset = (r: ProbeReply) =>
  r.rateLimit.reset === undefined ? undefined : r.rateLimit.reset * 1000 - r.receivedAt;

/**
 * One request; when its reset is less than half a window away (a clock-aligned window about to
 * end, a key used just before, or a limiter that refills continuously), the reset is waited out and
 * a second request decides. Refusals are waited out as every refusal is.
 */
export async function firstLook(
  client: ProbeClient,
  o: { windowMs: number; signal?: AbortSignal },
): Promise<Look> {
  const evidence: string[] = [];
  let discarded = 0;
  const ask = async () => {
    client.shots = [] as Shot[];
    return client.request(1);
  };
  let r = await ask();
  for (let attempt = 1; ; attempt++) {
    const wait = untilReset(r);
    if (wait === undefined && admitted(r)) return { order: 'model-first', first: r, discarded, evidence };
    if (
      wait !== undefined &&
      admitted(r) &&
      (wait >= o.windowMs / 2 || wait > o.windowMs + HEADER_GRANULARITY_MS)
    )
      return { order: 'window-first', first: r, discarded, evidence };
    const pause = Math.max(client.pauseUntil, wait === undefined ? 0 : r.receivedAt + wait);
    // A refusal that outlives a window is a longer quota's (or a ban): the phases report it.
    const tooLong = pause - r.receivedAt > o.windowMs + HEADER_GRANULARITY_MS;
    if (attempt === 2 || tooLong || o.signal?.aborted)
      return { order: admitted(r) ? 'model-first' : 'window-first', first: r, discarded, evidence };
    evidence.push(
      admitted(r)
        ? `the first answer's reset was ${Math.round(wait ?? 0)} ms away, less than half a window: it was waited out and the key asked again`
        : 'the first request was refused: its pause was waited out and the key asked again',
    );
    await sleepUntil(pause + 1, o.signal);
    discarded++;
    r = await ask();
  }
}
