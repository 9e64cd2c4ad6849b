import type { Plan, RateWindow } from '../../api/plans.ts';
import { now } from '../../client/clock.ts';
import type { DailyWalk } from '../../result/capacity-types.ts';
import { EXCESS_BOUND, HEADER_GRANULARITY_MS, SLACK_MS } from '../model.ts';
import type { ProbeClient, ProbeReply } from '../probe-client.ts';
import { windowFirstEstimateMs } from './estimate.ts';
import type { Measured, PhasesMeasured } from './measured.ts';
import { nextAnchor, pacedWindow } from './paced-window.ts';

/** Refused paced windows after which the walk gives up (the target admits less than the plan). */
const MAX_REFUSED_WINDOWS = 3;

/** The plan's longest window, when it is longer than the shortest: the daily quota. */
export function dailyWindow(plan: Plan): RateWindow | undefined {
  let shortest: RateWindow | undefined;
  let longest: RateWindow | undefined;
  for (const w of plan.windows) {
    if (!shortest || w.seconds < shortest.seconds) shortest = w;
    if (!longest || w.seconds > longest.seconds) longest = w;
  }
  return longest && shortest && longest.seconds > shortest.seconds ? longest : undefined;
}

/**
 * How long the minute phases take for one plan against a window that announces its reset, before
 * any answer told the latency: the paced windows, then one exhausted and the quota's return. The
 * probe says it again once its first answers told the latency and the order.
 */
export function capacityEstimateMs(minute: RateWindow, pacedWindows: number, longerMs = 0): number {
  return windowFirstEstimateMs({
    windowMs: minute.seconds * 1000,
    limit: minute.limit,
    windows: pacedWindows,
    latencyMs: 0,
    longerMs,
  });
}

/**
 * How long `--daily` takes for one plan (time-scaled windows): the day's requests can only leave at
 * the minute limit per minute window, so the day costs limit(day) / limit(minute) windows, whatever
 * the client does. Said before starting, because against a real server it is hours for the larger plans.
 */
export function dailyEstimateMs(minute: RateWindow, day: RateWindow, pacedWindows: number): number {
  const walk = Math.ceil(Math.max(0, day.limit - (pacedWindows + 1) * minute.limit) / minute.limit) + 1;
  return capacityEstimateMs(minute, pacedWindows) + walk * minute.seconds * 1000 * 1.05;
}

/**
 * The rest of the day at the plan rate: one paced window after another, each of the minute's limit,
 * until the day's first 429. The last window is cut to the day's limit + 3, so that a limiter that
 * never refuses is not fed beyond the bound. The day's return is announced by that 429, not waited for.
 */
export async function walkDaily(
  client: ProbeClient,
  o: { minute: RateWindow; day: RateWindow; anchor: number; firstIndex: number; signal?: AbortSignal },
): Promise<DailyWalk> {
  const started = now();
  const D = o.day.limit;
  const L = o.minute.limit;
  const W = o.minute.seconds * 1000;
  const maxWindows = Math.ceil((D + EXCESS_BOUND) / L) + MAX_REFUSED_WINDOWS;
  let anchor = o.anchor;
  let windows = 0;
  let sent = 0;
  let accepted = 0;
  let rateLimited = 0;
  let refusedWindows = 0;
  let dayRefusal: ProbeReply | undefined;
  /** The admitted answer describing the day with the least left: the last one the server counted. */
  let describing: ProbeReply | undefined;
  const notes: string[] = [];
  const usedBefore = () =>
    describing ? D - (describing.rateLimit.remaining as number) - describing.admittedSoFar : null;

  while (!o.signal?.aborted && windows < maxWindows) {
    const budget = D + EXCESS_BOUND - client.admittedTotal - Math.max(0, usedBefore() ?? 0);
    if (budget <= 0) break;
    const w = await pacedWindow(client, {
      anchor,
      count: Math.min(L, budget),
      windowMs: W,
      firstIndex: o.firstIndex + sent,
      signal: o.signal,
    });
    windows++;
    sent += w.sent;
    accepted += w.accepted;
    for (const a of w.answers) {
      const left = a.rateLimit.remaining;
      if (a.rateLimit.limit !== D || left === undefined) continue;
      if (!describing || left <= (describing.rateLimit.remaining as number)) describing = a;
    }
    const refusal = w.refusal;
    if (refusal) {
      // The day's 429: it says so (Limit is the day's, or the wait is longer than a minute window),
      // or the day is spent by our own count (a server describing only the minute says neither).
      const spent = client.admittedTotal + Math.max(0, usedBefore() ?? 0) >= D;
      const longWait = (refusal.retryAfterMs ?? 0) > W + HEADER_GRANULARITY_MS;
      if (refusal.kind === 'refused' && (refusal.rateLimit.limit === D || longWait || spent)) {
        dayRefusal = refusal;
        break;
      }
      rateLimited += w.rateLimited;
      if (++refusedWindows >= MAX_REFUSED_WINDOWS) {
        notes.push(`${refusedWindows} windows refused at the plan rate: the walk stopped`);
        break;
      }
    }
    anchor = nextAnchor(client, w, anchor, W);
  }

  return walkReport(client, o, {
    started,
    windows,
    sent,
    accepted,
    rateLimited,
    dayRefusal,
    used: usedBefore(),
    notes,
  });
}

/** The walk's figures, and what the day's 429 announced about the day's return. */
function walkReport(
  client: ProbeClient,
  o: { minute: RateWindow; day: RateWindow },
  walk: {
    started: number;
    windows: number;
    sent: number;
    accepted: number;
    rateLimited: number;
    dayRefusal: ProbeReply | undefined;
    /** Of the day, used before the probe by the server's count; null when no answer described the day. */
    used: number | null;
    notes: string[];
  },
): DailyWalk {
  const { started, windows, sent, accepted, rateLimited, dayRefusal, used, notes } = walk;
  const D = o.day.limit;
  const acceptedByProbe = client.admittedTotal;
  const acceptedPerDay = dayRefusal ? acceptedByProbe + Math.max(0, used ?? 0) : null;
  if (used !== null && used > 0) notes.push(`the key had used ${used} of its day before the probe`);
  if (used !== null && used < 0)
    notes.push(`X-RateLimit-Remaining left ${-used} more of the day than its limit less what was admitted`);
  if (dayRefusal && used === null)
    notes.push('no answer described the day window before its 429: X-RateLimit-* showed only the minute');
  const retryAfterMs = dayRefusal?.retryAfterMs;
  const announcedReturnAt = dayRefusal
    ? dayRefusal.hasRetryAfter && retryAfterMs !== undefined
      ? dayRefusal.receivedAt + retryAfterMs
      : dayRefusal.rateLimit.reset !== undefined
        ? dayRefusal.rateLimit.reset * 1000
        : null
    : null;
  return {
    promised: D,
    windowSeconds: o.day.seconds,
    windows,
    sent,
    accepted,
    acceptedByProbe,
    usedBefore: used,
    acceptedPerDay,
    first429At: acceptedPerDay === null ? null : acceptedPerDay + 1,
    expected429At: D + 1,
    limit: dayRefusal?.rateLimit.limit ?? null,
    retryAfterSeconds:
      dayRefusal?.hasRetryAfter && retryAfterMs !== undefined ? Math.round(retryAfterMs / 10) / 100 : null,
    reset: dayRefusal?.rateLimit.reset ?? null,
    announcedReturnAt: announcedReturnAt === null ? null : Math.round(announcedReturnAt),
    rateLimited,
    notes,
    durationMs: Math.round(now() - started),
    minuteSeconds: o.minute.seconds,
    refusedAt: dayRefusal ? Math.round(dayRefusal.receivedAt) : null,
  };
}

/** Reasons the walk fails the plan (none: the day was as promised and its 429 told the truth). */
export function judgeDaily(d: DailyWalk): string[] {
  const reasons: string[] = [];
  const tolerance = HEADER_GRANULARITY_MS + SLACK_MS;
  if (d.first429At === null) {
    const stop = d.notes.find((n) => n.includes('walk stopped'));
    reasons.push(
      stop
        ? `the day's quota was not walked to its end: ${stop}`
        : `no daily 429 within ${d.acceptedByProbe + Math.max(0, d.usedBefore ?? 0)} admitted requests: the target admits more than the promised ${d.promised} a day`,
    );
    return reasons;
  }
  if (d.first429At !== d.expected429At)
    reasons.push(`the day's first 429 at request ${d.first429At}, expected ${d.expected429At}`);
  if (d.limit !== null && d.limit !== d.promised)
    reasons.push(`the day's 429 carried X-RateLimit-Limit ${d.limit}, not the day's ${d.promised}`);
  if (d.retryAfterSeconds === null) reasons.push("the day's 429 carried no Retry-After");
  if (d.retryAfterSeconds !== null && d.reset !== null && d.refusedAt !== null) {
    const gap = Math.abs(d.refusedAt + d.retryAfterSeconds * 1000 - d.reset * 1000);
    if (gap > tolerance)
      reasons.push(`the day's 429: Retry-After and X-RateLimit-Reset disagree by ${Math.round(gap)} ms`);
  }
  if (d.announcedReturnAt !== null && d.refusedAt !== null) {
    const wait = d.announcedReturnAt - d.refusedAt;
    if (wait <= d.minuteSeconds * 1000 + tolerance)
      reasons.push(
        `the day's 429 announced the quota back in ${Math.round(wait / 100) / 10} s, a minute window's wait: a client trusting it retries into a spent day`,
      );
  }
  if (d.rateLimited > 0) reasons.push(`${d.rateLimited} 429(s) at the plan rate before the day ran out`);
  return reasons;
}

/** `--daily`: the rest of the day at the plan rate after the probe's phases, until the day's 429; or why it was not walked. */
export async function walkDayAfter(
  client: ProbeClient,
  plan: Plan,
  minute: RateWindow,
  m: PhasesMeasured,
  signal?: AbortSignal,
): Promise<Measured['daily']> {
  const day = dailyWindow(plan);
  if (day && m.recovery.back && !signal?.aborted) {
    const walk = await walkDaily(client, {
      minute,
      day,
      anchor: m.dailyAnchor,
      firstIndex: m.recovery.nextIndex + m.paced.sent,
      signal,
    });
    return { walk };
  }
  return {
    notWalked: day
      ? 'the daily quota was not walked: the minute quota never came back'
      : `plan '${plan.name}' has no window longer than its ${minute.name}: no daily quota to walk`,
  };
}
