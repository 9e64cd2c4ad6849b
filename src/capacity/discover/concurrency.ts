import { now, sleepUntil } from '../../client/clock.ts';
import { EXCESS_BOUND, windowGuardMs } from '../model.ts';
import { admitted, type ProbeClient, type ProbeReply } from '../probe-client.ts';
import { countAnswer, type Exhausted, noBurst } from './exhaust.ts';

/** Requests opened at once at most: beyond that a limit is a rate's, not a concurrency's. */
export const MAX_AT_ONCE = 32;
/** Waves of the admitted count, each sent when the one before answered, that a concurrency limit admits whole. */
const WAVES = 2;
/** An admitted answer this much slower than the fastest (and at least its double) was held, not served. */
const HELD_MS = 100;
/** Answers quicker than this rarely overlap: a concurrency limit could go unseen. */
const OVERLAP_MS = 5;

/**
 * What the bursts from rest showed: the burst itself (it is the exhaustion's start), and whether
 * the refusals came from requests in flight (a concurrency limit) or from their number (a rate),
 * or whether the limiter held the excess and released it at its rate (a queue).
 */
export interface Ramp {
  exhausted: Exhausted;
  /** Requests in flight the target admits at most (null: no concurrency limit seen). */
  maxInFlight: number | null;
  /** Requests held and released at the rate rather than refused (null: none held). */
  queue: number | null;
  /** The interval at which held requests were released, ms (null: none held). */
  releaseIntervalMs: number | null;
  /** The last release: the limiter is at rest an interval after it. */
  lastReleaseAt: number;
  /** Refusals for too many in flight: not the rate's, and not counted in `exhausted`. */
  concurrencyRefused: number;
  /** The fastest answer, ms: the sequential phases take about this per request. */
  latencyMs: number;
  evidence: string[];
  nextIndex: number;
  /** `observe` said stop: the limiter delays rather than refuses, and the burst went far enough. */
  halted: boolean;
}

const latency = (r: ProbeReply) => r.receivedAt - r.sentAt;

/** The burst's own account, the answers added one by one, the first refusal kept. */
function take(out: Exhausted, r: ProbeReply): void {
  out.sent++;
  countAnswer(out, r);
}

/**
 * From rest, after the first answer: 2, 4, 8 ... requests at once, each burst when the one before
 * answered, never more than one beyond the plan's limit in all. A refusal among requests still in
 * flight may be a concurrency limit: one request alone, then waves of the admitted count, each when
 * the one before answered, tell it from a rate (a spent rate refuses them, a concurrency limit admits
 * them all). An answer held well beyond the fastest is a limiter that queues: its queue is measured
 * from rest instead.
 */
export async function rampFromRest(
  client: ProbeClient,
  o: {
    limit: number;
    windowMs: number;
    first: ProbeReply;
    signal?: AbortSignal;
    /** Told every answer in send order: true ends the ramp (a slow-down's growth is measured). */
    observe?: (r: ProbeReply) => boolean;
  },
): Promise<Ramp> {
  const ramp = rampFrom(o.first, o.observe);
  const out = ramp.exhausted;
  const most = Math.min(MAX_AT_ONCE, o.limit + 1);
  let overlapped = true;
  /** The largest burst admitted whole. */
  let largest = 1;
  // What Remaining last told (undefined: no header): no burst goes beyond it by more than one.
  let left = o.first.rateLimit.remaining;
  for (let k = 2; !o.signal?.aborted && !ramp.halted && admitted(o.first); k *= 2) {
    const size = Math.min(k, most - out.sent, left === undefined ? k : left + 1);
    if (size < 2) break;
    const burst = await atOnce(client, ramp, size);
    // A slow-down holds each request of a burst a step longer than the one that reached it before,
    // as it would requests sent one by one. Sent at once over several connections, they reach it in
    // any order (on a loaded machine, rarely their own): its watch reads them in the order answered.
    const answered = [...burst].sort((x, y) => x.receivedAt - y.receivedAt);
    for (const r of answered) if (o.observe?.(r)) ramp.halted = true;
    // The delay's growth is measured: a slow-down's held answers are no queue to measure from rest.
    if (ramp.halted) {
      for (const r of burst) take(out, r);
      break;
    }
    const ok = burst.filter((r) => admitted(r));
    const refused = burst.filter((r) => !admitted(r));
    for (const r of ok) {
      ramp.latencyMs = Math.min(ramp.latencyMs, latency(r));
      const told = r.rateLimit.remaining;
      if (told !== undefined) left = Math.min(left ?? told, told);
    }
    if (Math.min(...burst.map((r) => r.receivedAt)) < Math.max(...burst.map((r) => r.sentAt)))
      overlapped = false;
    if (looksQueued(ok, ramp.latencyMs)) return measureQueue(client, ramp, burst, o, o.signal);
    if (refused.length === 0) {
      for (const r of burst) take(out, r);
      largest = size;
      continue;
    }
    // A refusal answered while an admitted request of its burst was still in flight, and while the
    // window, when Remaining tells it, still had room. One telling its own quota spent (Remaining 0)
    // is that quota's (two windows at once each write their headers: the longer's room on admitted
    // answers, the shorter's on its refusal); one telling a wait (Retry-After), a rate's.
    const inFlight =
      refused.some((r) => ok.some((a) => a.receivedAt > r.receivedAt)) &&
      (left === undefined || left > 0) &&
      !refused.some((r) => r.rateLimit.remaining === 0 || r.hasRetryAfter);
    if (ok.length === 0 || !inFlight) for (const r of burst) take(out, r);
    else if (await concurrencyOnly(client, ramp, ok.length, burst, o.signal)) {
      ramp.maxInFlight = ok.length;
      ramp.concurrencyRefused = refused.length;
      client.concurrency = ok.length;
      return ramp;
    }
    break;
  }
  noteOverlap(ramp, overlapped, largest);
  return ramp;
}

/** The ramp as its first answer leaves it. */
function rampFrom(first: ProbeReply, observe?: (r: ProbeReply) => boolean): Ramp {
  const exhausted = noBurst();
  take(exhausted, first);
  return {
    exhausted,
    maxInFlight: null,
    queue: null,
    releaseIntervalMs: null,
    lastReleaseAt: first.receivedAt,
    concurrencyRefused: 0,
    latencyMs: latency(first),
    evidence: [],
    nextIndex: first.index + 1,
    halted: observe?.(first) ?? false,
  };
}

/** Whether the bursts could have told a concurrency limit at all, and if so how far none was found. */
function noteOverlap(ramp: Ramp, overlapped: boolean, largest: number): void {
  if (!overlapped || ramp.latencyMs < OVERLAP_MS)
    ramp.evidence.push(
      `the answers came in ${Math.round(ramp.latencyMs)} ms, too quick for the requests sent at once to be all in flight together: a concurrency limit could not be told`,
    );
  else if (ramp.maxInFlight === null && largest > 1)
    ramp.evidence.push(
      `${largest} requests in flight at once were admitted: no concurrency limit below that`,
    );
}

const held = (fastestMs: number) => fastestMs + Math.max(HELD_MS, fastestMs);
/** One answer held this long is a queue's release, not a busy machine's pause. */
const HELD_ALONE_MS = 400;

/**
 * A queue releases its held requests one per interval: two or more answers held, each released well
 * after the one before; or one held for long. A busy machine delays answers sent together alike.
 */
function looksQueued(ok: readonly ProbeReply[], fastestMs: number): boolean {
  const heldMs = ok
    .map(latency)
    .filter((ms) => ms > held(fastestMs))
    .sort((a, b) => a - b);
  if (heldMs.length === 1) return (heldMs[0] as number) > fastestMs + HELD_ALONE_MS;
  if (heldMs.length === 0) return false;
  const first = heldMs[0] as number;
  return heldMs.every((ms, i) => i === 0 || ms - (heldMs[i - 1] as number) >= Math.min(HELD_MS, first / 2));
}

async function atOnce(client: ProbeClient, ramp: Ramp, size: number): Promise<ProbeReply[]> {
  const requests: Promise<ProbeReply>[] = [];
  for (let j = 0; j < size; j++) requests.push(client.request(ramp.nextIndex++));
  return Promise.all(requests);
}

/**
 * After a burst of which `a` were admitted and the rest refused while they were in flight: one
 * request alone, then waves of `a`. All admitted: the refusals were for the number in flight. The
 * burst's admitted answers, and the waves', count in the burst from rest; its refusals do not.
 */
async function concurrencyOnly(
  client: ProbeClient,
  ramp: Ramp,
  a: number,
  burst: ProbeReply[],
  signal?: AbortSignal,
): Promise<boolean> {
  const out = ramp.exhausted;
  const answers: ProbeReply[] = [];
  let whole = true;
  for (let wave = 0; wave <= WAVES && whole && !signal?.aborted; wave++) {
    const size = wave === 0 ? 1 : a;
    const got = await atOnce(client, ramp, size);
    answers.push(...got);
    whole = got.every((r) => admitted(r));
  }
  if (!whole) {
    for (const r of [...burst, ...answers]) take(out, r);
    return false;
  }
  for (const r of [...burst.filter((r) => admitted(r)), ...answers]) take(out, r);
  const refused = burst.length - a;
  ramp.evidence.push(
    `${burst.length} requests at once: ${a} admitted, ${refused} refused at once while they were in flight; then ${WAVES} waves of ${a}, each sent when the one before answered, were all admitted: a limit of ${a} requests in flight, not a rate`,
  );
  return true;
}

/**
 * A limiter that held some answers (nginx `limit_req` with a burst and no `nodelay`): once it is at
 * rest again, requests a small step apart, not waiting for their answers, until the first refusal.
 * Those answered at once are its burst; those held, its queue, released one per interval.
 */
async function measureQueue(
  client: ProbeClient,
  ramp: Ramp,
  seen: ProbeReply[],
  o: { limit: number; windowMs: number; observe?: (r: ProbeReply) => boolean },
  signal?: AbortSignal,
): Promise<Ramp> {
  const roughInterval = await untilAtRest(client, ramp, seen, o.windowMs, signal);
  const step = Math.max(2, Math.min(50, roughInterval / 20));
  // One request alone first: a queue at rest answers it at once. Held even so, the limiter slows
  // every request past a count (express-slow-down), and has no queue to measure: the burst so far
  // goes on, one request at a time, which its watch reads.
  const alone = await client.request(ramp.nextIndex++);
  if (o.observe?.(alone)) ramp.halted = true;
  if (admitted(alone) && latency(alone) > held(ramp.latencyMs)) {
    for (const r of seen) take(ramp.exhausted, r);
    take(ramp.exhausted, alone);
    ramp.evidence.push(
      `an answer held ${Math.round(latency(alone) - ramp.latencyMs)} ms beyond the fastest even from rest: a limiter that slows requests down rather than queue them at a rate`,
    );
    return ramp;
  }
  const out = noBurst();
  ramp.exhausted = out;
  take(out, alone);
  const answers = await steppedUntilRefused(client, ramp, alone, o.limit, step, signal);
  for (const r of answers.slice(1)) take(out, r);
  return readRelease(ramp, answers, step);
}

/**
 * Waits until the queue has drained, after the held answers seen; returns the interval they were
 * released at, roughly (the step of the requests that measure it is a small share of it).
 */
async function untilAtRest(
  client: ProbeClient,
  ramp: Ramp,
  seen: ProbeReply[],
  windowMs: number,
  signal?: AbortSignal,
): Promise<number> {
  const heldSeen = seen.filter((r) => admitted(r) && latency(r) > held(ramp.latencyMs));
  const longest = Math.max(...heldSeen.map(latency)) - ramp.latencyMs;
  const roughInterval = longest / heldSeen.length;
  const lastSeen = Math.max(...seen.map((r) => r.receivedAt));
  // The queue drains by its last release; a window after it any limiter the plan describes is at
  // rest too, so that what follows is a burst from rest even if the held answers were no queue's.
  const guard = windowGuardMs(windowMs);
  await sleepUntil(
    Math.max(lastSeen + 2 * roughInterval, lastSeen + windowMs + guard, client.pauseUntil + 1),
    signal,
  );
  return roughInterval;
}

/** After `alone`, requests `step` apart, not waiting for their answers, until the first refusal. */
async function steppedUntilRefused(
  client: ProbeClient,
  ramp: Ramp,
  alone: ProbeReply,
  limit: number,
  step: number,
  signal?: AbortSignal,
): Promise<ProbeReply[]> {
  const pending: Promise<ProbeReply>[] = [];
  let refusedSeen = !admitted(alone);
  const start = now();
  for (let j = 1; j < Math.min(MAX_AT_ONCE, limit + EXCESS_BOUND) && !refusedSeen && !signal?.aborted; j++) {
    await sleepUntil(start + j * step, signal);
    if (refusedSeen) break;
    pending.push(
      client.request(ramp.nextIndex++).then((r) => {
        if (!admitted(r)) refusedSeen = true;
        return r;
      }),
    );
  }
  return [alone, ...(await Promise.all(pending))];
}

/** Releases a queue's timer and ours may put off its interval by this much, or a quarter of it. */
const RELEASE_SLACK_MS = 15;

/**
 * A gap between consecutive answers (in the order answered) that a queue releasing one per
 * `interval` would not leave, if any: a busy machine's pause delays answers and then lets them go
 * together, a queue spaces every one of them by its interval.
 */
export function strayRelease(ok: readonly ProbeReply[], interval: number): number | undefined {
  const slack = Math.max(RELEASE_SLACK_MS, interval / 4);
  for (let i = 1; i < ok.length; i++) {
    const gap = (ok[i] as ProbeReply).receivedAt - (ok[i - 1] as ProbeReply).receivedAt;
    if (Math.abs(gap - interval) > slack) return gap;
  }
  return undefined;
}

/** The queue and its release interval, from the stepped requests' answers: those held were queued. */
function readRelease(ramp: Ramp, answers: ProbeReply[], step: number): Ramp {
  const out = ramp.exhausted;
  const ok = answers.filter((r) => admitted(r)).sort((a, b) => a.receivedAt - b.receivedAt);
  // The first answers of a run are slow (connections, compilation): the one answered at once sets the pace.
  for (const r of ok) ramp.latencyMs = Math.min(ramp.latencyMs, latency(r));
  const queued = ok.filter((r) => latency(r) > held(ramp.latencyMs));
  const apart = `from rest, ${answers.length} requests ${Math.round(step)} ms apart`;
  if (queued.length === 0) {
    ramp.evidence.push(
      `an answer came late, yet ${apart} none was held: no queue (the machine was busy), and these requests are the burst from rest`,
    );
    return ramp;
  }
  if (!out.refusal) {
    // A queue is bounded: beyond it the limiter refuses. Held ever longer and never refused is a
    // limiter that slows requests down (express-slow-down), which has no queue or release rate.
    ramp.evidence.push(
      `${apart}: ${queued.length} answered late, none refused: a limiter that slows requests down rather than queue them at a rate`,
    );
    return ramp;
  }
  const first = ok[0] as ProbeReply;
  const last = ok[ok.length - 1] as ProbeReply;
  if (ok.length < 2) {
    ramp.queue = queued.length;
    ramp.evidence.push(`${apart}: one held, the rest refused: a queue of 1, its release rate unseen`);
    return ramp;
  }
  const interval = (last.receivedAt - first.receivedAt) / (ok.length - 1);
  const stray = strayRelease(ok, interval);
  if (stray !== undefined) {
    ramp.evidence.push(
      `${apart}: ${queued.length} answered late, but not one per interval (${Math.round(stray)} ms apart where a queue's releases would be ${Math.round(interval)}): no queue (the machine was busy), and these requests are the burst from rest`,
    );
    return ramp;
  }
  ramp.queue = queued.length;
  ramp.releaseIntervalMs = interval;
  ramp.lastReleaseAt = last.receivedAt;
  ramp.evidence.push(
    `${apart}: ${ok.length - queued.length} answered at once, ${queued.length} held and released one per ${Math.round(ramp.releaseIntervalMs * 10) / 10} ms, ${answers.length - ok.length} refused: a limiter that queues ${queued.length} and releases them at its rate (held answers are not requests in flight)`,
  );
  return ramp;
}
