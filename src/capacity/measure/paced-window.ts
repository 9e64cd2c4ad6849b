import { now, sleepUntil } from '../../client/clock.ts';
import {
  type Family,
  HEADER_GRANULARITY_MS,
  type Pace,
  SLACK_MS,
  SPACING_GUARD,
  SPREAD,
  windowGuardMs,
} from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply, refused } from '../probe-client.ts';
import type { Recovery } from './recovery.ts';

export interface PacedWindow {
  sent: number;
  accepted: number;
  rateLimited: number;
  /** The resets the admitted answers announced (epoch ms, read in their dialect). */
  resets: number[];
  /** The slowest answer's round trip: a reset told as a delay is counted from its answer, up to this late. */
  maxRttMs: number;
  /** The first answer: the target's window began before it. */
  firstAnsweredAt: number | undefined;
  /** The first refusal (429 or 403), if any. */
  refusal: ProbeReply | undefined;
  /** Every admitted answer, in arrival order (the daily walk reads their headers). */
  answers: ProbeReply[];
}

export interface PacedWindowOptions {
  anchor: number;
  count: number;
  windowMs: number;
  firstIndex: number;
  /** 'spread': evenly over 90% of the window; 'spaced': at the plan's spacing plus 10%, never closer. */
  pace?: Pace;
  /** The answer to the window's first request, already sent (by the look at the limiter). */
  first?: ProbeReply;
  signal?: AbortSignal;
}

/**
 * How many different resets `instants` announce, to the headers' precision: an instant within a
 * second (and slack) of the first of a group belongs to it, two resets closer being one
 * announcement; a reset told as a delay is read from the answer's arrival, which may come up to
 * `rttMs` after the server counted it. A fixed window announces one, however its dialect counts; a
 * sliding log moves its reset with every request.
 */
export function distinctResets(instants: readonly number[], rttMs = 0): number {
  let groups = 0;
  let groupStart = Number.NEGATIVE_INFINITY;
  for (const t of [...instants].sort((a, b) => a - b)) {
    if (t - groupStart <= HEADER_GRANULARITY_MS + SLACK_MS + rttMs) continue;
    groups++;
    groupStart = t;
  }
  return groups;
}

/**
 * `count` requests over a window from `anchor`, as a client paced at the plan rate sends them. The
 * window stops at its first refusal: the target has shown a limit below the plan's, and sending the
 * rest would only pile requests beyond it.
 */
export async function pacedWindow(client: ProbeClient, o: PacedWindowOptions): Promise<PacedWindow> {
  const out: PacedWindow = {
    sent: 0,
    accepted: 0,
    rateLimited: 0,
    resets: [],
    maxRttMs: 0,
    firstAnsweredAt: undefined,
    refusal: undefined,
    answers: [],
  };
  let known: number | undefined;
  const spaced = o.pace === 'spaced';
  const spacing = spaced
    ? (o.windowMs / Math.max(1, o.count)) * (1 + SPACING_GUARD)
    : (o.windowMs * SPREAD) / Math.max(1, o.count);
  const take = (r: ProbeReply) => {
    if (admitted(r)) {
      out.accepted++;
      out.answers.push(r);
      if (r.rateLimit.reset !== undefined) out.resets.push(r.rateLimit.reset * 1000);
      out.maxRttMs = Math.max(out.maxRttMs, r.receivedAt - r.sentAt);
    } else if (refused(r)) {
      out.rateLimited++;
      if (!out.refusal || r.index < out.refusal.index) out.refusal = r;
    }
    if (r.rateLimit.remaining !== undefined)
      known = known === undefined ? r.rateLimit.remaining : Math.min(known, r.rateLimit.remaining);
    // The server's window began when this first request arrived: before it was answered.
    out.firstAnsweredAt ??= r.receivedAt;
  };
  if (o.first) {
    out.sent = 1;
    take(o.first);
  }
  const pending: Promise<void>[] = [];
  for (let j = out.sent; j < o.count && !o.signal?.aborted; j++) {
    const due = o.anchor + j * spacing;
    // Spaced, one at a time: the next leaves a spacing after the one before was written, which is
    // known once it is answered.
    if (spaced) await pending[pending.length - 1];
    await sleepUntil(spaced ? Math.max(due, client.lastWrittenAt + spacing) : due, o.signal);
    await client.slot(() => known);
    if (out.refusal || o.signal?.aborted) break;
    const index = o.firstIndex + out.sent++;
    pending.push(client.request(index).then(take));
  }
  await Promise.all(pending);
  return out;
}

/** When the next paced window may start: a window and a guard after this one's first answer, never inside a pause. */
export function nextAnchor(client: ProbeClient, w: PacedWindow, anchor: number, windowMs: number): number {
  const guard = windowGuardMs(windowMs);
  return Math.max((w.firstAnsweredAt ?? anchor) + windowMs + guard, client.pauseUntil, now());
}

/** The plan-rate windows, as the report tells them. */
export interface PacedPhase {
  sent: number;
  rateLimited: number;
  acceptedPerWindow: number[];
  resetValuesPerWindow: number[];
  /** Every reset the windows' answers told (epoch ms, in the order told): a clock-aligned window's span. */
  resetsTold: number[];
  /** Windows in which the client fell behind the plan rate. */
  behind: number;
  last: PacedWindow | undefined;
  /** When a next paced window could start. */
  next: number;
  /** How the windows were paced (absent: none were sent). */
  pace?: Pace;
}

/**
 * L requests per window for N windows; a window's first request leaves a window and a guard after
 * the previous one's first answer. A window already begun by `first` is not waited for.
 */
export async function pacedWindows(
  client: ProbeClient,
  o: {
    anchor: number;
    windows: number;
    limit: number;
    windowMs: number;
    pace: Pace;
    firstIndex: number;
    first?: ProbeReply;
    /** Why the windows are not sent at all (the plan rate cannot be kept). */
    infeasible: string | undefined;
    stalled: () => boolean;
    signal?: AbortSignal;
  },
): Promise<PacedPhase> {
  const out: PacedPhase = {
    sent: 0,
    rateLimited: 0,
    acceptedPerWindow: [],
    resetValuesPerWindow: [],
    resetsTold: [],
    behind: 0,
    last: undefined,
    next: o.anchor,
    pace: o.pace,
  };
  const { signal, windowMs, pace } = o;
  if (o.infeasible) return out;
  const guardMs = windowGuardMs(windowMs);
  for (let k = 0; k < o.windows && !signal?.aborted && !o.stalled(); k++) {
    if (k > 0 || !o.first) await sleepUntil(out.next, signal);
    const w = await pacedWindow(client, {
      anchor: out.next,
      count: o.limit,
      windowMs,
      firstIndex: o.firstIndex + out.sent,
      pace,
      first: k === 0 ? o.first : undefined,
      signal,
    });
    out.last = w;
    out.sent += w.sent;
    out.rateLimited += w.rateLimited;
    if (now() - out.next > windowMs * (pace === 'spaced' ? 1.1 : 1) + guardMs) out.behind++;
    out.acceptedPerWindow.push(w.accepted);
    out.resetValuesPerWindow.push(distinctResets(w.resets, w.maxRttMs));
    out.resetsTold.push(...w.resets);
    if (o.stalled()) break;
    out.next = nextAnchor(client, w, out.next, windowMs);
  }
  return out;
}

/** The reset `at`, when it announces the window's end within a window from now (not a longer quota's); else 0. */
export function windowEnd(windowMs: number, at: number | undefined): number {
  return at !== undefined && at <= now() + windowMs + HEADER_GRANULARITY_MS ? at : 0;
}

/**
 * The plan rate starts on a whole quota: after the announced reset (or, told nothing, a window
 * after the quota's return) for a window; at once for a limiter that refills continuously, whose
 * pacing keeps the spacing from the last request anyway.
 */
export function pacedAnchorAfterModel(
  model: { family: Family; recovery: Recovery; returnRangeMs: { low: number; high: number } | null },
  o: { earliest: number; windowMs: number; guardMs: number },
): number {
  if (model.family !== 'window') return o.earliest;
  const end = windowEnd(o.windowMs, model.recovery.wholeAgainAt);
  if (end > 0) return Math.max(o.earliest, end + 1);
  const back = model.recovery.back?.sentAt ?? now();
  const range = model.returnRangeMs;
  const windowMs =
    range && o.windowMs >= range.low && o.windowMs <= range.high * 1.01
      ? o.windowMs
      : (range?.high ?? o.windowMs);
  return Math.max(o.earliest, back + windowMs + o.guardMs);
}
