import { isSpacingLimiter } from '../../api/limiter-kinds.ts';
import { now, sleepUntil } from '../../client/clock.ts';
import type { LimiterReport, ModelCheck } from '../../result/capacity-types.ts';
import { type PacedPhase, pacedWindows } from '../measure/paced-window.ts';
import type { Pace } from '../model.ts';
import type { ProbeClient } from '../probe-client.ts';

/**
 * The model's own test: a last paced phase at what it says the limiter admits (its window's limit
 * spread over the window, or its rate spaced), not at the plan's. A model is a claim about every
 * client that keeps to it; one 429 here and the claim is wrong, whatever the earlier phases fitted.
 */

/** What the check sends: a window's worth at the model's pace, after the quota is whole again. */
export interface CheckPace {
  limit: number;
  windowMs: number;
  pace: Pace;
  /** How long after the last request the model holds nothing of it. */
  restMs: number;
}

/** The pace a model claims for ever (undefined: it claims none, as `unknown` or a concurrency limit). */
export function checkPace(l: LimiterReport, planWindowMs: number): CheckPace | undefined {
  if (l.type === 'concurrency' || !l.sustainedPerSecond) return undefined;
  // A longer window still holds the earlier phases' requests until it has passed after the last.
  const longestMs = Math.max(0, ...(l.windows ?? []).map((w) => w.seconds * 1000));
  // Told nothing of its model, a rate kept under a block is still a claim: checked spaced at it;
  // so is a window measured whole (a moving window, told apart from a fixed one by nothing).
  if (l.type === 'unknown' && !l.block && !l.window) return undefined;
  if (l.type === 'unknown' ? Boolean(l.block) : isSpacingLimiter(l.type)) {
    const intervalMs = 1000 / l.sustainedPerSecond;
    return {
      limit: Math.max(1, Math.round(planWindowMs / intervalMs)),
      windowMs: planWindowMs,
      pace: 'spaced',
      restMs: Math.max(((l.burst ?? 0) + 1) * intervalMs, longestMs),
    };
  }
  if (!l.window) return undefined;
  const windowMs = l.window.seconds * 1000;
  // A sliding counter still weighs the previous period for up to a window after it ended.
  const restMs = Math.max(l.type === 'sliding-counter' ? 2 * windowMs : windowMs, longestMs);
  return { limit: l.window.limit, windowMs, pace: 'spread', restMs };
}

/**
 * The check run, and when a next paced phase could start after it. Where the model's pace is the
 * plan's (a window of the plan's limit and length, or its spacing), the plan-rate windows were
 * already paced at the model, and their figures are the check: a phase more would repeat them.
 */
export async function checkModel(
  client: ProbeClient,
  l: LimiterReport,
  o: {
    planWindowMs: number;
    planLimit: number;
    paced: PacedPhase;
    guardMs: number;
    stalled: () => boolean;
    signal?: AbortSignal;
  },
): Promise<{ check: ModelCheck; next: number } | undefined> {
  const pace = checkPace(l, o.planWindowMs);
  if (!pace || o.signal?.aborted) return undefined;
  const { paced } = o;
  if (
    paced.sent > 0 &&
    paced.pace === pace.pace &&
    pace.limit === o.planLimit &&
    Math.abs(pace.windowMs - o.planWindowMs) <= 1
  )
    return { check: { sent: paced.sent, refused: paced.rateLimited, phase: 'paced-windows' }, next: 0 };
  const lastAt = client.history.reduce((m, s) => Math.max(m, s.at), 0);
  const anchor = Math.max(now(), client.pauseUntil + 1, lastAt + pace.restMs + o.guardMs);
  await sleepUntil(anchor, o.signal);
  const phase = await pacedWindows(client, {
    anchor,
    windows: 1,
    limit: pace.limit,
    windowMs: pace.windowMs,
    pace: pace.pace,
    firstIndex: 1,
    infeasible: undefined,
    stalled: o.stalled,
    signal: o.signal,
  });
  return { check: { sent: phase.sent, refused: phase.rateLimited, phase: 'model' }, next: phase.next };
}

/** What the check says of the model: in the evidence, and, with a refusal, among the verdict's reasons. */
export function checkFindings(l: LimiterReport, check: ModelCheck): { evidence: string; reason?: string } {
  const at = l.window ? `${l.window.limit} per ${l.window.seconds} s` : `${l.sustainedPerSecond}/s`;
  const paced =
    check.phase === 'paced-windows'
      ? `the plan-rate windows were paced at the model (${at}): ${check.sent} requests`
      : `paced last at the model (${at}), ${check.sent} requests`;
  if (check.refused === 0) return { evidence: `${paced} drew no refusal: the model holds` };
  const said = `${paced} drew ${check.refused} refusal(s)`;
  return { evidence: said, reason: `${said}: the ${l.type} model does not hold` };
}
