import { type Plan, shortestWindow } from '../../api/plans.ts';
import type { RefusalStatuses } from '../../api/responses.ts';
import type { Transport } from '../../client/client.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { BanReport } from '../../result/capacity-types.ts';
import type { NetworkOptions } from '../../transport/network.ts';
import { exhaustWindow } from '../discover/exhaust.ts';
import { HEADER_GRANULARITY_MS, recoveryStepMs, SLACK_MS } from '../model.ts';
import { admitted, ProbeClient, type ProbeReply, refused } from '../probe-client.ts';
import type { ProbedOperation } from '../probed-operation.ts';

export interface BanProbeOptions {
  baseUrl: string;
  apiKey: string;
  /** The key's plan as the target counts it (time-scaled). */
  plan: Plan;
  timeScale: number;
  /** The request the ban is provoked with: the plans' own. */
  probe: ProbedOperation;
  /** Requests inside Retry-After at most (default 20): a target that bans later is reported as not banning. */
  maxStrikes?: number;
  /** The longest announced ban waited out (ms, real time). */
  maxWaitMs: number;
  timeoutMs?: number;
  refusalStatuses?: RefusalStatuses;
  signal?: AbortSignal;
  transport?: Transport;
  network?: NetworkOptions | undefined;
}

export const DEFAULT_MAX_STRIKES = 20;
const MAX_END_PROBES = 8;
const BAN_CODE = /ban|block|suspend/i;

/**
 * A ban, as a client can tell it from a rate limit: a 403, an Error code that names it, or a wait
 * that runs past the first 429's (a rate limit's wait never outlives its window).
 */
export function isBanSignal(r: ProbeReply, firstRetryAt: number): boolean {
  // A bare 403 refuses the key outright; a limiter's refusal in 403 is judged by its wait, as a 429.
  if (r.status === 403 && r.kind !== 'refused') return true;
  if (!refused(r)) return false;
  if (BAN_CODE.test(r.code ?? '')) return true;
  return (
    r.retryAfterMs !== undefined &&
    r.receivedAt + r.retryAfterMs > firstRetryAt + HEADER_GRANULARITY_MS + SLACK_MS
  );
}

/** What the probe has sent so far, shared by its stages: the request count and the last request's index. */
interface ProbeCount {
  requests: number;
  index: number;
}

type Window = NonNullable<ReturnType<typeof shortestWindow>>;
type Exhausted = Awaited<ReturnType<typeof exhaustWindow>>;

/** The report as the exhausted window leaves it: no strikes yet, no ban, a pass until a reason says not. */
function openReport(
  o: BanProbeOptions,
  window: Window,
  exhausted: Exhausted,
  reasons: string[],
  notes: string[],
): BanReport {
  const first = exhausted.refusal;
  return {
    plan: o.plan.name,
    timeScale: o.timeScale,
    window: { name: window.name, limit: window.limit, seconds: window.seconds },
    exhaust: {
      sent: exhausted.sent,
      accepted: exhausted.accepted,
      first429At: first && refused(first) ? exhausted.accepted + 1 : null,
    },
    strikes: {
      sent: 0,
      retryAfterSeconds:
        first?.hasRetryAfter && first.retryAfterMs !== undefined
          ? Math.round(first.retryAfterMs / 10) / 100
          : null,
      toBan: null,
      quotaReturnedFirst: false,
    },
    banned: false,
    ban: null,
    requests: 0,
    verdict: 'pass',
    reasons,
    notes,
    durationMs: 0,
  };
}

/**
 * Strikes: inside the first 429's Retry-After, one at a time, until the answer changes. The reply that
 * says "banned", or none when the window came back first or the strikes ran out.
 */
async function strike(
  o: BanProbeOptions,
  client: ProbeClient,
  first: ProbeReply,
  firstRetryAt: number,
  report: BanReport,
  count: ProbeCount,
): Promise<ProbeReply | undefined> {
  const maxStrikes = o.maxStrikes ?? DEFAULT_MAX_STRIKES;
  // The key was banned before the probe began (a wait alone does not say so: its day may be spent).
  if ((first.status === 403 && first.kind !== 'refused') || BAN_CODE.test(first.code ?? '')) {
    report.notes.push('the key was refused as banned before any request inside Retry-After');
    return first;
  }
  while (report.strikes.sent < maxStrikes && now() < firstRetryAt && !o.signal?.aborted) {
    const r = await client.request(++count.index, true);
    report.strikes.sent++;
    count.requests++;
    // A bare 403 is a ban here, not an admission: the key was refused outright.
    if (isBanSignal(r, firstRetryAt)) return r;
    if (admitted(r)) {
      report.strikes.quotaReturnedFirst = true;
      return undefined;
    }
  }
  return undefined;
}

/** How long the ban's reply says it lasts: its Retry-After, else its reset; undefined when it says neither. */
function announcedBanMs(banned: ProbeReply): number | undefined {
  return banned.hasRetryAfter
    ? banned.retryAfterMs
    : banned.rateLimit.reset !== undefined
      ? Math.max(0, banned.rateLimit.reset * 1000 - banned.receivedAt)
      : undefined;
}

/** When the ban's reply says it ends (unrounded, ms), or null when it says nothing. */
function announcedEnd(banned: ProbeReply): number | null {
  const announcedMs = announcedBanMs(banned);
  return announcedMs === undefined ? null : banned.receivedAt + announcedMs;
}

/** The ban as its reply announced it, and what in that reply contradicts itself. */
function readBan(banned: ProbeReply, reasons: string[], tolerance: number): NonNullable<BanReport['ban']> {
  const announcedMs = announcedBanMs(banned);
  const announcedEndAt = announcedEnd(banned);
  const ban: NonNullable<BanReport['ban']> = {
    status: banned.status,
    code: banned.code ?? null,
    retryAfterSeconds:
      banned.hasRetryAfter && banned.retryAfterMs !== undefined
        ? Math.round(banned.retryAfterMs / 10) / 100
        : null,
    reset: banned.rateLimit.reset ?? null,
    remaining: banned.rateLimit.remaining ?? null,
    announcedSeconds: announcedMs === undefined ? null : Math.round(announcedMs / 10) / 100,
    announcedEndAt: announcedEndAt === null ? null : Math.round(announcedEndAt),
    endedAt: null,
    endErrorMs: null,
    probes: 0,
    waited: false,
  };
  if (refused(banned) && ban.retryAfterSeconds === null)
    reasons.push(`the ban's ${banned.status} carried no Retry-After`);
  if (ban.retryAfterSeconds !== null && ban.reset !== null) {
    const gap = Math.abs(banned.receivedAt + ban.retryAfterSeconds * 1000 - ban.reset * 1000);
    if (gap > tolerance)
      reasons.push(`the ban's Retry-After and X-RateLimit-Reset disagree by ${Math.round(gap)} ms`);
  }
  if (ban.remaining !== null && ban.remaining !== 0)
    reasons.push(`the ban's X-RateLimit-Remaining was ${ban.remaining}, not 0`);
  return ban;
}

/**
 * The ban's end, waited out and probed (never inside the announcement): the probe after it is the
 * first one admitted. Without an announcement, a window, then twice as long each time: every probe
 * may prolong a ban.
 */
async function probeBanEnd(
  o: BanProbeOptions,
  client: ProbeClient,
  banned: ProbeReply,
  ban: NonNullable<BanReport['ban']>,
  announcedEndAt: number | null,
  windowMs: number,
  deadline: number,
  count: ProbeCount,
  notes: string[],
): Promise<void> {
  let blindWait = windowMs;
  if (announcedEndAt === null) client.pauseUntil = Math.max(client.pauseUntil, banned.receivedAt + blindWait);
  const step = recoveryStepMs(o.timeScale);
  while (ban.probes < MAX_END_PROBES && !o.signal?.aborted) {
    if (client.pauseUntil > deadline) {
      notes.push('the ban was not over within --ban-max-wait');
      break;
    }
    await sleepUntil(client.pauseUntil + 1, o.signal);
    if (o.signal?.aborted) break;
    ban.probes++;
    count.requests++;
    const r = await client.request(++count.index);
    if (admitted(r) && r.status !== 403) {
      ban.endedAt = Math.round(r.sentAt);
      break;
    }
    if (!r.hasRetryAfter && r.rateLimit.reset === undefined) {
      blindWait *= 2;
      client.pauseUntil = Math.max(client.pauseUntil, r.receivedAt + blindWait);
    }
    client.pauseUntil = Math.max(client.pauseUntil, now() + step);
  }
}

/**
 * The temporary ban, provoked on purpose: the one probe that breaks the rules every other part of
 * the toolkit keeps, so it runs only on a key the user named for it, records nothing into the run's
 * figures (the client-side checks would rightly fail it), and stops at the first sign of a ban.
 */
export async function probeBan(o: BanProbeOptions): Promise<BanReport> {
  const started = now();
  const window = shortestWindow(o.plan.windows);
  if (!window) throw new Error(`plan '${o.plan.name}' has no windows`);
  const windowMs = window.seconds * 1000;
  const client = new ProbeClient({
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    windowMs,
    probe: o.probe,
    keyLabel: `ban:${o.plan.name}`,
    timeoutMs: o.timeoutMs,
    refusalStatuses: o.refusalStatuses,
    transport: o.transport,
    network: o.network,
  });
  const count: ProbeCount = { requests: 0, index: 0 };
  const reasons: string[] = [];
  const notes: string[] = [];
  const tolerance = HEADER_GRANULARITY_MS + Math.max(SLACK_MS, 2 * recoveryStepMs(o.timeScale));
  try {
    const exhausted = await exhaustWindow(client, window.limit, o.signal);
    count.requests += exhausted.sent;
    count.index = exhausted.sent;
    const first = exhausted.refusal;
    const report = openReport(o, window, exhausted, reasons, notes);
    if (!first) {
      if (!o.signal?.aborted)
        reasons.push(`no 429 within ${exhausted.sent} requests: nothing to provoke a ban with`);
      return finish(report);
    }

    const firstRetryAt = first.receivedAt + (first.retryAfterMs ?? windowMs);
    const banned = await strike(o, client, first, firstRetryAt, report, count);
    if (!banned) {
      if (!o.signal?.aborted)
        notes.push(
          report.strikes.quotaReturnedFirst
            ? `the window came back after ${report.strikes.sent} request(s) inside Retry-After, before any ban`
            : `no ban after ${report.strikes.sent} request(s) inside Retry-After`,
        );
      return finish(report);
    }
    report.banned = true;
    report.strikes.toBan = banned === first ? 0 : report.strikes.sent;

    const ban = readBan(banned, reasons, tolerance);
    report.ban = ban;
    const announcedEndAt = announcedEnd(banned);
    const deadline = started + o.maxWaitMs;
    if (announcedEndAt !== null && announcedEndAt > deadline) {
      notes.push(
        `the ban announced ${ban.announcedSeconds} s, beyond --ban-max-wait: its end was not waited for`,
      );
      return finish(report);
    }
    ban.waited = true;
    await probeBanEnd(o, client, banned, ban, announcedEndAt, windowMs, deadline, count, notes);
    if (ban.endedAt !== null && announcedEndAt !== null) {
      ban.endErrorMs = Math.round(ban.endedAt - announcedEndAt);
      if (ban.endErrorMs > tolerance)
        reasons.push(`the ban lasted ${ban.endErrorMs} ms beyond its announced end`);
    }
    if (ban.endedAt === null && !o.signal?.aborted && !notes.some((n) => n.includes('--ban-max-wait')))
      reasons.push(`the ban was not over ${ban.probes} probes after its announced end`);
    return finish(report);
  } finally {
    await client.close();
  }

  function finish(report: BanReport): BanReport {
    report.requests = count.requests;
    report.verdict = reasons.length === 0 ? 'pass' : 'fail';
    report.durationMs = Math.round(now() - started);
    return report;
  }
}
