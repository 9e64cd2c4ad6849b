import { Gcra, type LimiterModel, SlidingCounter, TokenBucket } from '../../api/limiter-models.ts';
import type { LimiterReport } from '../../result/capacity-types.ts';
import type { Shot } from '../probe-client.ts';

/**
 * A model the probe's own answers contradict is never reported. A token bucket or a GCRA admits at
 * most its size plus its rate times a span; where the paced windows were admitted more than that, the
 * model inferred from the return (often a rate search run while the probe's own refusals were still
 * counted against it) is rejected. What the answers then fit is looked for by replaying every one of
 * them through a candidate (`src/api/limiter-models.ts`, the models the server emulates): a sliding
 * counter, with or without counting refusals, as gateways and CDNs compute a rate. None fitting, the
 * type is `unknown`, naming the nearest and how many answers it gets wrong.
 */

/** What the paced windows were admitted, over how long. */
export interface PacedAdmitted {
  admitted: number;
  spanSeconds: number;
}

/** The rate estimate is a measurement: its bound is allowed this much, and one request. */
const BOUND_SLACK = 1.1;
/** A rate this far below the paced windows' puts the model in doubt (an estimate's own error is a few %). */
const RATE_DOUBT = 0.95;

/** Answers a fitting model may get wrong: requests written at a boundary reach the limiter on either side. */
export const tolerated = (answers: number) => Math.max(1, Math.ceil(answers * 0.03));

/** Answers `model` predicts otherwise than they came, replayed in the order they were written. */
export function mispredicted(model: LimiterModel, answers: readonly Shot[]): number {
  let wrong = 0;
  for (const a of [...answers].sort((x, y) => x.at - y.at))
    if (model.admit('probe', a.at).allowed !== a.admitted) wrong++;
  return wrong;
}

/** The spacing model a report names, as a model to replay: one request per 1/rate, and its burst. */
function spacingModel(l: LimiterReport & { sustainedPerSecond: number; burst: number }): LimiterModel {
  const intervalMs = 1000 / l.sustainedPerSecond;
  return l.type === 'token-bucket'
    ? new TokenBucket(1, intervalMs, Math.max(1, l.burst))
    : new Gcra(1, intervalMs, l.burst);
}

/**
 * Why a spacing model is in doubt against the paced windows: they were admitted more than it admits
 * at most (`rejected`: it is wrong), or faster than its rate (it may be right over so short a span,
 * if its burst covered the difference: the replay decides).
 */
export function pacedDoubt(
  l: LimiterReport,
  paced: PacedAdmitted,
): { why: string; rejected: boolean } | undefined {
  if (l.type !== 'token-bucket' && l.type !== 'gcra') return undefined;
  if (!l.sustainedPerSecond || l.burst === null || paced.admitted === 0 || paced.spanSeconds <= 0)
    return undefined;
  const size = l.type === 'token-bucket' ? l.burst : l.burst + 1;
  const most = size + l.sustainedPerSecond * paced.spanSeconds * BOUND_SLACK + 1;
  const model = `a ${l.type} of ${size} at ${l.sustainedPerSecond}/s`;
  if (paced.admitted > most)
    return {
      why: `the paced windows were admitted ${paced.admitted} requests in ${paced.spanSeconds} s, more than ${model} admits (${Math.floor(most)}): that model is rejected`,
      rejected: true,
    };
  const pacedRate = paced.admitted / paced.spanSeconds;
  if (l.sustainedPerSecond >= pacedRate * RATE_DOUBT) return undefined;
  return {
    why: `${model} is slower than the ${Math.round(pacedRate * 1000) / 1000}/s the paced windows were admitted at`,
    rejected: false,
  };
}

/**
 * The report's spacing model, checked against the paced windows and, in doubt, against every answer:
 * replaced by the sliding counter of `limit` per `seconds` that predicts the answers better (within
 * `tolerated`), or, where the paced windows rejected it and none fits, by `unknown`.
 */
export function checkedModel(
  l: LimiterReport,
  paced: PacedAdmitted,
  answers: readonly Shot[],
  window: { limit: number; seconds: number },
): LimiterReport {
  const doubt = pacedDoubt(l, paced);
  if (!doubt || !l.sustainedPerSecond || l.burst === null) return l;
  const own = mispredicted(
    spacingModel({ ...l, sustainedPerSecond: l.sustainedPerSecond, burst: l.burst }),
    answers,
  );
  const fits = [true, false].map((countRefused) => ({
    countRefused,
    wrong: mispredicted(new SlidingCounter(window.limit, window.seconds * 1000, countRefused), answers),
  }));
  const best = fits.reduce((a, b) => (b.wrong < a.wrong ? b : a));
  const counter = `a sliding counter of ${window.limit} per ${window.seconds} s${best.countRefused ? ' that counts refused requests' : ''}`;
  const n = answers.length;
  const fitsBetter = best.wrong <= tolerated(n) && best.wrong < own;
  if (!fitsBetter && !doubt.rejected) return l;
  const evidence = [...l.evidence, doubt.why, `replayed, ${l.type} gets ${own} of the ${n} answers wrong`];
  if (!fitsBetter) {
    evidence.push(`nearest: ${counter}, which gets ${best.wrong} wrong`);
    return { ...l, type: 'unknown', sustainedPerSecond: null, burst: null, window: null, evidence };
  }
  evidence.push(`${counter} gets ${best.wrong}: its rate is the window's, admitted paced for ever`);
  return {
    ...l,
    type: 'sliding-counter',
    sustainedPerSecond: Math.round((window.limit / window.seconds) * 10_000) / 10_000,
    burst: window.limit,
    window,
    evidence,
  };
}
