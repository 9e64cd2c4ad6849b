import type { CheckResult } from '../record/checks/tally.ts';
import { type DialectCounts, detectedDialect, inDialectOrder } from '../record/dialects.ts';
import { heldKind } from '../record/held-by-limiter.ts';
import { encodeHistogram, type LatencyStats, newHistogram } from '../record/histogram.ts';
import { outagesFromStart } from '../result/store-outages.ts';
import type {
  Compliance,
  HeaderDialect,
  HeldByLimiterSeen,
  LimiterSeen,
  StoreOutageSeen,
  WorkloadSummary,
} from '../result/types.ts';
import { decodeOrRefuse } from './decode-histogram.ts';
import { mergedStats } from './merge-summary.ts';

/**
 * The first failures kept per check, as tally.ts keeps them (its MAX_SAMPLES, and the schema's
 * maxItems): a merged result keeps the earliest ones of all parts.
 */
const MAX_CHECK_SAMPLES = 5;
/** As violations.ts keeps them. */
const MAX_VIOLATION_SAMPLES = 5;

/** Checks by id (in order of first appearance): passes, failures and responses not declared summed, earliest samples kept. */
export function mergeChecks(lists: CheckResult[][]): CheckResult[] {
  const byId = new Map<string, CheckResult>();
  for (const list of lists) {
    for (const check of list) {
      const m = byId.get(check.id);
      if (!m) {
        byId.set(check.id, structuredClone(check));
        continue;
      }
      m.passes += check.passes;
      m.failures += check.failures;
      if (check.notDeclared !== undefined) m.notDeclared = (m.notDeclared ?? 0) + check.notDeclared;
      m.samples.push(...structuredClone(check.samples));
    }
  }
  return [...byId.values()].map((c) => ({
    ...c,
    samples: c.samples.sort((a, b) => a.at - b.at).slice(0, MAX_CHECK_SAMPLES),
  }));
}

export function mergeViolationSamples(
  lists: Compliance['violationSamples'][],
): Compliance['violationSamples'] {
  return lists
    .flat()
    .map((s) => ({ ...s }))
    .sort((a, b) => a.sentAt - b.sentAt)
    .slice(0, MAX_VIOLATION_SAMPLES);
}

/** Iterations summed, per flow too; a flow's first error is the earliest part's (parts come in start order). */
export function mergeWorkloads(workloads: WorkloadSummary[]): WorkloadSummary {
  const merged: WorkloadSummary = { iterations: 0, droppedIterations: 0, failedIterations: 0, flows: {} };
  for (const w of workloads) {
    merged.iterations += w.iterations;
    merged.droppedIterations += w.droppedIterations;
    merged.failedIterations += w.failedIterations;
    for (const [name, flow] of Object.entries(w.flows)) {
      const m = merged.flows[name] ?? { iterations: 0, failures: 0 };
      merged.flows[name] = m;
      m.iterations += flow.iterations;
      m.failures += flow.failures;
      if (m.firstError === undefined && flow.firstError !== undefined) m.firstError = flow.firstError;
    }
  }
  return merged;
}

/**
 * Dialects counted over every part, the one detected read again from the sums; the contract is the
 * earliest part's, as the merged configuration is. Undefined when no part counted any.
 */
export function mergeHeaderDialects(parts: (HeaderDialect | undefined)[]): HeaderDialect | undefined {
  const present = parts.filter((p): p is HeaderDialect => p !== undefined);
  const [first] = present;
  if (!first) return undefined;
  const counts: DialectCounts = {};
  for (const p of present)
    for (const [d, n] of Object.entries(p.counts) as [keyof DialectCounts, number][])
      counts[d] = (counts[d] ?? 0) + n;
  return {
    contract: first.contract,
    detected: detectedDialect(counts),
    alsoSent: inDialectOrder(present.flatMap((p) => p.alsoSent)),
    counts,
  };
}

/**
 * The limiter as every part met it: the model given to any (they share one command line), else a
 * GCRA if any part learned one; the widest gap any kept, and every rate cut.
 */
export function mergeLimiters(parts: (LimiterSeen | undefined)[]): LimiterSeen | undefined {
  const present = parts.filter((p): p is LimiterSeen => p !== undefined);
  if (present.length === 0) return undefined;
  const given = present.find((p) => p.given);
  const learned = (['gcra', 'concurrency'] as const).find((m) => present.some((p) => p.model === m));
  // Each generator capped its own requests in flight: the tightest cap is the limit any of them met.
  const caps = present.flatMap((p) => (p.maxInFlight === undefined ? [] : [p.maxInFlight]));
  const inFlightCuts = present.reduce((n, p) => n + (p.inFlightCuts ?? 0), 0);
  return {
    model: given?.model ?? learned ?? 'unknown',
    given: given !== undefined,
    gapMs: Math.max(...present.map((p) => p.gapMs)),
    rateCuts: present.reduce((n, p) => n + p.rateCuts, 0),
    ...(caps.length > 0 ? { maxInFlight: Math.min(...caps) } : {}),
    ...(inFlightCuts > 0 ? { inFlightCuts } : {}),
  };
}

/** A part's held responses (none: undefined), with its overall service time, all of it unheld then. */
export interface HeldPart {
  held: HeldByLimiterSeen | undefined;
  service: LatencyStats;
  serviceHistogram: string;
  /** Where the part's histograms are, for an error that names it. */
  where: string;
}

/**
 * Held responses over every part: counts and holds summed, the longest kept, the kind read again
 * from the sums; a queue's interval and a slow-down's step averaged over the responses each held.
 * A part's answers of no kind stay so: its `responses` less `queued` and `slowed`. The service time
 * without the held is every part's (all of a part's service time when it held none), added up.
 * Undefined when no part held any.
 */
export function mergeHeldByLimiter(parts: HeldPart[]): HeldByLimiterSeen | undefined {
  const present = parts.flatMap((p) => (p.held ? [p.held] : []));
  if (present.length === 0) return undefined;
  const sum = (f: (p: HeldByLimiterSeen) => number) => present.reduce((n, p) => n + f(p), 0);
  const queued = sum((p) => p.queued);
  const slowed = sum((p) => p.slowed);
  const intervalMs = sum((p) => (p.intervalMs ?? 0) * p.queued) / queued;
  const stepMs = sum((p) => (p.stepMs ?? 0) * p.slowed) / slowed;
  const unheld = newHistogram();
  for (const p of parts)
    unheld.add(
      p.held
        ? decodeOrRefuse(p.held.unheldHistogram, `${p.where}: compliance.heldByLimiter.unheldHistogram`)
        : decodeOrRefuse(p.serviceHistogram, `${p.where}: overall.histograms.service`),
    );
  return {
    responses: sum((p) => p.responses),
    totalMs: sum((p) => p.totalMs),
    longestMs: Math.max(...present.map((p) => p.longestMs)),
    kind: heldKind(queued, slowed),
    queued,
    slowed,
    ...(queued > 0 ? { intervalMs: Math.round(intervalMs * 10) / 10 } : {}),
    ...(slowed > 0 ? { stepMs: Math.round(stepMs * 10) / 10 } : {}),
    unheld: mergedStats(
      unheld,
      parts.map((p) => p.held?.unheld ?? p.service),
    ),
    unheldHistogram: encodeHistogram(unheld),
  };
}

/**
 * Every part's store outages on one clock (`start`: each part's start, epoch ms), one spell where
 * parts saw the same outage (they overlap, or meet within a second), with their held sends added up.
 * A spell that any part never saw end never ended.
 */
export function mergeStoreOutages(
  parts: { outages: StoreOutageSeen[] | undefined; start: number }[],
  start: number,
): StoreOutageSeen[] | undefined {
  const spells = parts
    .flatMap((p) =>
      (p.outages ?? []).map((o) => ({
        ...o,
        from: p.start + o.from * 1000,
        to: o.to === undefined ? Number.POSITIVE_INFINITY : p.start + o.to * 1000,
      })),
    )
    .sort((a, b) => a.from - b.from);
  if (spells.length === 0) return undefined;
  const merged: typeof spells = [];
  for (const s of spells) {
    const last = merged.at(-1);
    if (last && s.from <= last.to + 1000) {
      last.to = Math.max(last.to, s.to);
      last.held += s.held;
      last.sentWithout += s.sentWithout;
      last.resumed ??= s.resumed;
    } else merged.push({ ...s });
  }
  return outagesFromStart(
    merged.map((o) => ({ ...o, to: Number.isFinite(o.to) ? o.to : undefined })),
    start,
  );
}
