import type { Plan, RateWindow } from '../../api/plans.ts';
import type { Dialect } from '../../api/rate-limit-dialect.ts';
import type { CapacityReport } from '../../result/capacity-types.ts';
import { withSlowDown } from '../discover/slow-down.ts';
import { refusalsCountEvidence } from '../discover/window-refusals.ts';
import { blockEvidence, measuredBlock } from '../measure/block.ts';
import { judgeDaily } from '../measure/daily.ts';
import { inferLimiter, RESET_SEMANTICS } from '../measure/infer-limiter.ts';
import { limiterWindows, windowReasons } from '../measure/longer-windows.ts';
import type { Measured } from '../measure/measured.ts';
import { searchSummary } from '../measure/rate-search.ts';
import { recoveryStepMs } from '../model.ts';
import type { ProbedOperation } from '../probed-operation.ts';
import { checkFindings } from '../verify/model-check.ts';
import { checkedModel } from '../verify/replay.ts';
import { judge } from '../verify/verdict.ts';

/** A release timed by a timer on each side may be off by this much; the interval, by it over the releases. */
const RELEASE_JITTER_MS = 4;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The plan the probe measured against. */
export interface ProbeSetup {
  /** The plan as the target counts it (time-scaled). */
  plan: Plan;
  /** The same plan unscaled: what it promises per minute and per day. */
  promised: Plan;
  timeScale: number;
  /** The plan's shortest window: the one the phases measured. */
  window: RateWindow;
  /** The operation every request of the probe was. */
  operation: ProbedOperation['operation'];
}

/** The report of one plan's probe, and its verdict, from what the probe measured. */
export function capacityReport(m: Measured, setup: ProbeSetup): CapacityReport {
  const report = figures(m, setup);
  report.limiter.evidence.unshift(...m.look.evidence);
  const { verdict, reasons } = judge(report, recoveryStepMs(setup.timeScale), notes(m, setup.window));
  // The stall explains what follows from it (no quota back, no window measured): it comes first.
  report.reasons = m.stalledBy ? [m.stalledBy, ...reasons] : reasons;
  report.verdict = verdict;
  if (m.daily && 'walk' in m.daily) {
    report.daily = m.daily.walk;
    report.reasons.push(...judgeDaily(m.daily.walk));
  } else if (m.daily) report.reasons.push(m.daily.notWalked);
  report.limiter.check = m.check ?? null;
  if (m.check) {
    const { evidence, reason } = checkFindings(report.limiter, m.check);
    report.limiter.evidence.push(evidence);
    if (reason) report.reasons.push(reason);
  }
  if (setup.plan.windows.length > 1) {
    report.limiter.windows = limiterWindows(report, setup.plan, setup.window, m.longer, m.limitsTold);
    report.reasons.push(...windowReasons(report.limiter.windows, setup.plan, setup.window));
  }
  report.violations = m.violations;
  if (m.violations > 0)
    report.reasons.push(`${m.violations} request(s) sent inside a Retry-After (a bug of ours)`);
  if (report.reasons.length > 0) report.verdict = 'fail';
  report.durationMs = m.durationMs;
  return report;
}

function figures(m: Measured, setup: ProbeSetup): CapacityReport {
  const w = setup.window;
  const rejected = m.exhausted.refusal;
  const minute = setup.promised.windows.find((w) => w.seconds === 60);
  const day = setup.promised.windows.find((w) => w.seconds === 86_400);
  return {
    plan: setup.plan.name,
    operation: { id: setup.operation.id, method: setup.operation.method, path: setup.operation.path },
    timeScale: setup.timeScale,
    window: { name: w.name, limit: w.limit, seconds: w.seconds },
    promisedPerMinute: minute?.limit ?? null,
    promisedPerDay: day?.limit ?? null,
    rate: {
      windows: m.paced.acceptedPerWindow.length,
      sent: m.paced.sent,
      acceptedPerWindow: m.paced.acceptedPerWindow,
      rateLimited: m.paced.rateLimited,
      acceptedPerMinute: m.paced.acceptedPerWindow.length ? Math.min(...m.paced.acceptedPerWindow) : null,
      resetValuesPerWindow: m.paced.resetValuesPerWindow,
    },
    exhaust: {
      sent: m.exhausted.sent,
      accepted: m.exhausted.accepted,
      // Requests travel over several connections and reach the server out of send order: the
      // 429 came after every request the window admitted.
      first429At: rejected ? m.exhausted.accepted + 1 : null,
      expected429At: w.limit + 1,
      headers:
        m.exhausted.samples.length <= 8
          ? m.exhausted.samples
          : [...m.exhausted.samples.slice(0, 3), ...m.exhausted.samples.slice(-5)],
      retryAfterSeconds:
        rejected && m.recovery.announcedRetryAt !== null
          ? Math.round((m.recovery.announcedRetryAt - rejected.receivedAt) / 10) / 100
          : null,
      reset:
        rejected?.rateLimit.reset === undefined ? null : Math.round(rejected.rateLimit.reset * 1000) / 1000,
    },
    recovery: recoveryFigures(m),
    limiter: limiter(m, setup),
    violations: 0,
    verdict: 'pass',
    reasons: [],
    durationMs: 0,
  };
}

function recoveryFigures(m: Measured): CapacityReport['recovery'] {
  const r = m.recovery;
  const quotaBackAt = r.back ? r.back.sentAt : null;
  // A token bucket's or a GCRA's reset announces a full bucket, not the next request: not its return.
  const resetErrorMs =
    quotaBackAt !== null && r.announcedResetAt !== null && m.family !== 'spacing'
      ? Math.round(quotaBackAt - r.announcedResetAt)
      : null;
  return {
    probes: r.probes,
    announcedRetryAt: r.announcedRetryAt === null ? null : Math.round(r.announcedRetryAt),
    announcedResetAt: r.announcedResetAt === null ? null : Math.round(r.announcedResetAt),
    quotaBackAt: quotaBackAt === null ? null : Math.round(quotaBackAt),
    resetErrorMs,
    resetAccuracyMs: resetErrorMs === null ? null : Math.abs(resetErrorMs),
    retryAfterAccuracyMs:
      quotaBackAt !== null && r.announcedRetryAt !== null
        ? Math.max(0, Math.round(quotaBackAt - r.announcedRetryAt))
        : null,
    remainingAtReturn: r.back?.rateLimit.remaining ?? null,
    remainingAfterTenth: r.remainingAfterTenth,
  };
}

function limiter(m: Measured, setup: ProbeSetup): CapacityReport['limiter'] {
  const paced = {
    admitted: m.paced.acceptedPerWindow.reduce((a, b) => a + b, 0),
    spanSeconds: m.paced.acceptedPerWindow.length * setup.window.seconds,
  };
  const limit = m.exhausted.refusal ? m.exhausted.accepted : setup.window.limit;
  const report = checkedModel(inferred(m, setup), paced, m.answers, {
    limit,
    seconds: setup.window.seconds,
  });
  if (m.block) {
    const { block, evidence } = m.block;
    report.block =
      block && m.exhausted.refusal ? measuredBlock(block, m.exhausted.refusal, m.recovery.back) : null;
    report.evidence.push(report.block ? blockEvidence(report.block) : evidence);
  }
  report.refusalStatus = refusalStatusOf(m.refusedWith);
  if (m.underBlock)
    report.evidence.push(
      `after the block, ${m.recovery.probes > 1 ? 'its bucket spent but for one request, ' : ''}${m.paced.acceptedPerWindow.join(' and ')} admitted in ${m.paced.acceptedPerWindow.length} windows spaced at the plan rate, none refused: ${round2(1000 / m.underBlock.intervalMs)}/s kept; a faster rate was not sought, at the cost of another block`,
    );
  if (m.limitsTold.length > 1)
    report.evidence.push(
      `the headers told limits of ${m.limitsTold.join(' and ')}: several windows at once, an answer telling one or another`,
    );
  const ramp = m.ramp;
  if (!ramp) return report;
  report.evidence.push(...ramp.evidence);
  report.maxInFlight = ramp.maxInFlight;
  report.queue = ramp.queue;
  // Refusals for too many in flight, and no rate's: the concurrency limit is the limiter.
  if (report.type === 'unknown' && ramp.maxInFlight !== null) report.type = 'concurrency';
  return report;
}

/**
 * The span of a window aligned to the clock, from the resets told (whole seconds): the smallest gap
 * between two distinct ones, when every gap is a whole number of it. A window that begins at a key's
 * first request tells gaps of a window and the idle time between, which share no such span.
 */
export function toldResetSpan(resetsMs: readonly number[]): { toldResetSpanSeconds?: number } {
  const told = [...new Set(resetsMs.map((ms) => Math.round(ms / 1000)))].sort((a, b) => a - b);
  const gaps = told.slice(1).map((s, i) => s - (told[i] as number));
  if (gaps.length === 0) return {};
  const span = Math.min(...gaps);
  // Whole seconds make every span a multiple of 1 s: a sliding window's moving reset would pass.
  if (span < 2) return {};
  return gaps.every((g) => g % span === 0) ? { toldResetSpanSeconds: span } : {};
}

/** The status most of the limiter's refusals came with; null when it refused nothing. */
function refusalStatusOf(refusedWith: ReadonlyMap<number, number>): number | null {
  let most: [number, number] | null = null;
  for (const entry of refusedWith) if (!most || entry[1] > most[1]) most = entry;
  return most ? most[0] : null;
}

/** The rate model; a queue's rate is its release interval, told to within the timers' jitter. */
function inferred(m: Measured, setup: ProbeSetup) {
  const queued = m.queued;
  const dialect = headerDialect(m.dialects);
  const answers = [m.look.first, m.exhausted.last, m.recovery.back];
  const jitter = queued ? RELEASE_JITTER_MS / Math.max(1, m.exhausted.accepted - 1) : 0;
  const released = queued && {
    probes: m.exhausted.sent,
    refused: m.exhausted.sent - m.exhausted.accepted,
    intervalMs: { low: round2(queued.intervalMs - jitter), high: round2(queued.intervalMs + jitter) },
    durationMs: Math.round(queued.lastReleaseAt - (m.exhausted.startedAt ?? 0)),
  };
  const limiter = inferLimiter({
    family: m.family,
    plan: { limit: setup.window.limit, seconds: setup.window.seconds },
    burstAdmitted: m.exhausted.refusal ? m.exhausted.accepted - (queued?.queue ?? 0) : null,
    burstStartedAt: m.exhausted.startedAt,
    quotaBackAt: m.recovery.back?.sentAt ?? null,
    atOnce: m.recovery.atOnce,
    atOnceLate: m.recovery.atOnceLate,
    atOnceFrom: m.atOnceFrom,
    remainingAfterTenth: m.recovery.remainingAfterTenth,
    // The refusal's own Limit first: a limiter of several windows tells the spent one on its 429,
    // and maybe a longer one's room on the answers it admits.
    headerLimit:
      m.exhausted.refusal?.rateLimit.limit ??
      answers.find((a) => a?.rateLimit.limit !== undefined)?.rateLimit.limit,
    declaredWindowSeconds: answers.find((a) => a?.rateLimit.windowSeconds !== undefined)?.rateLimit
      .windowSeconds,
    resetValuesPerWindow: m.paced.resetValuesPerWindow,
    ...toldResetSpan(m.paced.resetsTold),
    headerDialect: dialect,
    resetSemantics: dialect !== 'none' && m.resetDialects.has(dialect) ? RESET_SEMANTICS[dialect] : 'none',
    search: released || (m.search ? searchSummary(m.search) : undefined),
    estimate: queued
      ? { intervalMs: queued.intervalMs, burst: 0 }
      : (m.underBlock ?? m.search?.candidates.estimate() ?? null),
    returnRangeMs: m.returnRangeMs,
    blocked: m.block?.block !== undefined,
    returnSlackMs: 2 * recoveryStepMs(setup.timeScale),
    pacedKept:
      m.paced.acceptedPerWindow.length > 1 &&
      m.paced.rateLimited === 0 &&
      m.paced.acceptedPerWindow.every((n) => n === setup.window.limit),
    queue: queued?.queue,
  });
  const counted = refusalsCountEvidence(
    m.recovery.atOnce,
    m.recovery.back?.rateLimit.limit ?? m.exhausted.accepted,
    m.recovery.refusedBefore ?? 0,
  );
  if (counted && m.family === 'window') limiter.evidence.push(counted);
  return m.slowDown && !m.exhausted.refusal ? withSlowDown(limiter, m.slowDown) : limiter;
}

/** The dialect most answers spoke; `none` only when none spoke any. */
function headerDialect(dialects: Measured['dialects']): Dialect | 'none' {
  let best: [Dialect | 'none', number] = ['none', 0];
  for (const entry of dialects) if (entry[0] !== 'none' && entry[1] > best[1]) best = entry;
  return best[0];
}

/** What the verdict should say besides the limiter's figures: why the measure may be off. */
function notes(m: Measured, window: RateWindow): string[] {
  const out: string[] = [];
  const delayed = m.slowDown?.result() && !m.exhausted.refusal;
  if (m.infeasible) out.push(m.infeasible);
  if (m.paced.behind > 0)
    out.push(
      delayed
        ? `at the plan rate the server's delays held answers past the end of ${m.paced.behind} window(s)`
        : `the client fell behind the plan rate in ${m.paced.behind} window(s)`,
    );
  if (m.slowDown?.stoppedBecause && !m.exhausted.refusal && !m.slowDown.result())
    out.push(m.slowDown.stoppedBecause);
  if (m.exhaustMs > window.seconds * 1000 && m.exhausted.refusal === undefined && !delayed)
    out.push(
      `the client took ${Math.round(m.exhaustMs)} ms to send ${m.exhausted.sent} requests, more than a window`,
    );
  return out;
}
