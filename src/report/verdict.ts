import type { CapacityReport } from '../result/capacity-types.ts';
import type { RunResult, ThresholdResult, TierSummary } from '../result/types.ts';
import { count, counted, decimal, percent } from './format.ts';
import { refusalStatuses } from './refusals.ts';
import { workloadSentNothing } from './run-span.ts';

/**
 * One verdict on every result, computed here once and shown as it is by every output (the HTML
 * report's top box, the terminal summary, the markdown summary, JUnit): the thresholds where any
 * were declared; a capacity probe's plans; a tenant ramp's number; otherwise the run's compliance,
 * part by part. The exit code is not decided here: thresholds, probes, a baseline and isolation
 * fail a run (exit 1) as they did, and a compliance part that fails says so without failing it.
 */
export interface Verdict {
  kind: 'thresholds' | 'compliance' | 'capacity' | 'tenant-capacity';
  passed: boolean;
  /** `compliance: pass`, `thresholds: 1 of 2 failed`, `capacity: 4 of 4 plans passed`. */
  headline: string;
  /** What decides it: the thresholds, the compliance parts, the plans (and their thresholds). */
  parts: VerdictPart[];
  /** The other gates that fail a run: probes, a baseline's regressions, a tenant mix's isolation. */
  gates: VerdictPart[];
  /** With thresholds declared: the compliance parts, shown for reading (the thresholds decide). */
  compliance?: VerdictPart[];
}

export interface VerdictPart {
  /** `checks`, `violations`, `refusals`, `utilisation`; a threshold's expression; a plan's name. */
  id: string;
  passed: boolean;
  /** One line: `checks: 21 of 21 passed`, `violations: 0`. */
  text: string;
  /** Why, line by line, where there is more than the line (a plan's reasons). */
  reasons?: string[];
}

/** A `bench` result (or a merge of them): its refusals measured the limiter, not the API. */
export const isBench = (result: RunResult): boolean => result.meta.scenario.split(', ').includes('bench');

/** A tenant mix's tiers: its plans' and its named groups'. */
const tiersOf = (result: RunResult): TierSummary[] => [
  ...Object.values(result.byPlan ?? {}),
  ...Object.values(result.byTenantGroup ?? {}),
];

const failedCount = (parts: readonly VerdictPart[]) => parts.filter((p) => !p.passed).length;

/** The verdict of a result: see Verdict. */
export function verdictOf(result: RunResult): Verdict {
  const gates = gateParts(result);
  const gated = (v: Omit<Verdict, 'passed' | 'gates'>): Verdict => {
    const passed = failedCount(v.parts) === 0 && failedCount(gates) === 0;
    const failingGates = gates.filter((g) => !g.passed).map((g) => g.text);
    const headline = [v.headline, ...failingGates].join('; ');
    return { ...v, passed, headline, gates };
  };
  if (result.capacity !== undefined) return gated(capacityVerdict(result));
  if (result.tenantCapacity !== undefined) return gated(tenantCapacityVerdict(result));
  const thresholds = result.thresholds ?? [];
  const compliance = complianceParts(result);
  // A run that did nothing passes nothing, whatever its figures of nothing say.
  const idle = idlePart(result);
  if (thresholds.length > 0) {
    const judged = thresholds.map(thresholdPart);
    const failed = failedCount(judged);
    const headline = `thresholds: ${failed === 0 ? `${judged.length} of ${judged.length} passed` : `${failed} of ${judged.length} failed`}${idle.length > 0 ? '; no iteration completed' : ''}`;
    const parts = [...idle, ...judged];
    return gated({ kind: 'thresholds', headline, parts, compliance });
  }
  // Named as their lines name them (`429s` when every refusal was one).
  const parts = [...idle, ...compliance];
  const failing = parts.filter((p) => !p.passed).map((p) => p.text.split(/[: ]/)[0]);
  const headline =
    failing.length === 0
      ? `compliance: ${parts.length} of ${parts.length} parts passed`
      : `compliance: ${failing.length} of ${parts.length} parts failed (${failing.join(', ')})`;
  return gated({ kind: 'compliance', headline, parts });
}

/** A workload that completed no iteration (or sent nothing) judged nothing: a failing part, else none. */
function idlePart(result: RunResult): VerdictPart[] {
  const n = result.workload.iterations;
  if (n === 0) {
    const sent = counted(result.overall.requests, 'request', 'requests');
    const text = `iterations: none completed (${sent} sent): the run did not do its job`;
    return [{ id: 'iterations', passed: false, text }];
  }
  if (!workloadSentNothing(result)) return [];
  const text = `requests: the workload sent none in its ${counted(n, 'iteration', 'iterations')}: the run measured nothing of the target`;
  return [{ id: 'requests', passed: false, text }];
}

function thresholdPart(t: ThresholdResult): VerdictPart {
  const measured = t.actual === null ? 'nothing measured' : `measured ${decimal(t.actual)}`;
  const detail = t.detail ? `: ${t.detail}` : '';
  const aborted = t.aborted ? ' (ended the run early)' : '';
  return {
    id: t.expression,
    passed: t.passed,
    text: `${t.expression} (${t.source}), ${measured}${detail}${aborted}`,
  };
}

/** Checks, violations, refusals, utilisation: what a compliance tool answers without thresholds. */
export function complianceParts(result: RunResult): VerdictPart[] {
  return [checksPart(result), violationsPart(result), refusalsPart(result), utilisationPart(result)];
}

function checksPart(result: RunResult): VerdictPart {
  const { checks } = result;
  const failed = checks.filter((c) => c.failures > 0);
  if (checks.length === 0) return { id: 'checks', passed: true, text: 'checks: none evaluated' };
  if (failed.length === 0)
    return { id: 'checks', passed: true, text: `checks: ${checks.length} of ${checks.length} passed` };
  const which = failed.map((c) => `${c.id} on ${counted(c.failures, 'response', 'responses')}`);
  return {
    id: 'checks',
    passed: false,
    text: `checks: ${failed.length} of ${checks.length} failed (${which.join(', ')})`,
  };
}

function violationsPart(result: RunResult): VerdictPart {
  const n = result.compliance.violations;
  return n === 0
    ? { id: 'violations', passed: true, text: 'violations: 0' }
    : {
        id: 'violations',
        passed: false,
        text: `violations: ${counted(n, 'request', 'requests')} sent inside a Retry-After`,
      };
}

/**
 * A paced client keeps within the plan, so every refusal it met is a finding: the target refused
 * what its plan promised, or the pacing let through more than it should. Raw mode does not pace:
 * the limiter's refusal is how it learns the limit, and what is judged is that it kept every pause
 * the refusal asked for (the violations). A benchmark that met refusals measured the limiter. A
 * tenant mix judges its paced tiers' refusals, not its raw groups'.
 */
function refusalsPart(result: RunResult): VerdictPart {
  const { compliance: c, overall } = result;
  // Named 429s when every refusal was one, as every output names them (refusals.ts).
  const statuses = refusalStatuses(c);
  const of = `${statuses === undefined ? '429s' : 'refusals'}: ${count(c.rateLimited)} of ${count(overall.requests)}${statuses === undefined ? '' : ` (${statuses})`}`;
  const tiers = tiersOf(result);
  if (tiers.length > 0) {
    const paced = tiers.filter((t) => t.enforce).reduce((n, t) => n + t.rateLimited, 0);
    const raw = tiers.filter((t) => !t.enforce).reduce((n, t) => n + t.rateLimited, 0);
    const rawText = raw > 0 ? `; ${count(raw)} to raw-mode groups, expected` : '';
    return {
      id: 'refusals',
      passed: paced === 0,
      text: `${of}: ${count(paced)} to paced tenants${paced > 0 ? ', whose plans promise none' : ''}${rawText}`,
    };
  }
  if (c.rateLimited === 0) return { id: 'refusals', passed: true, text: `${of}` };
  if (isBench(result))
    return {
      id: 'refusals',
      passed: false,
      text: `${of}: the key's limiter held the benchmark back`,
    };
  if (result.config.enforce)
    return {
      id: 'refusals',
      passed: false,
      text: `${of} to a paced client, which the plan's pace should draw none of`,
    };
  return {
    id: 'refusals',
    passed: true,
    text: `${of}, expected in raw mode (the pauses they asked for are the violations)`,
  };
}

/**
 * Utilisation is the admitted requests over the most the plan's windows admit over the run to a
 * client that keeps them evenly paced. A paced client over 100% got more than its pacing should have
 * let through. A raw one may: a window's whole limit at once is within the plan, and over a run
 * shorter than a few windows that reads as more than the even pace (a 5 s burst into a 6 s window
 * of 60: 119%), so raw mode fails only past what the windows admit in any phase, a window's limit
 * for every window the run touched. A tenant mix judges its paced tiers.
 */
function utilisationPart(result: RunResult): VerdictPart {
  const c = result.compliance;
  const id = 'utilisation';
  if (!(c.planRate > 0))
    return { id, passed: true, text: 'utilisation: the plan sets no quota to measure against' };
  const share = `utilisation ${percent(c.quotaUtilization)} of the quota`;
  if (c.quotaUtilization <= 1) return { id, passed: true, text: `${share}, within it` };
  const tiers = tiersOf(result);
  if (tiers.length > 0) {
    const over = tiers
      .filter((t) => t.enforce && !withinSlack(t.admitted, t.utilization.overall))
      .map((t) => t.plan);
    return over.length === 0
      ? { id, passed: true, text: `${share}, over the even pace only in raw-mode groups` }
      : { id, passed: false, text: `${share}: paced tiers over theirs (${[...new Set(over)].join(', ')})` };
  }
  if (result.config.enforce)
    return withinSlack(c.admitted, c.quotaUtilization)
      ? { id, passed: true, text: `${share}, within it but for the span's measure (${PACED_SLACK * 100}%)` }
      : {
          id,
          passed: false,
          text: `${share}, over it: the pacing let through more than the plan's windows admit`,
        };
  const most = burstBound(result);
  return c.admitted <= most
    ? {
        id,
        passed: true,
        text: `${share}'s even pace, within its windows' limits in a burst (at most ${count(most)} in ${decimal(result.meta.durationSeconds)} s)`,
      }
    : {
        id,
        passed: false,
        text: `${share}, over it: ${count(c.admitted)} admitted, more than the plan's windows admit in any phase (${count(most)})`,
      };
}

/**
 * The span is timed from the first send to the last answer while the pacer counts from its own
 * clock, so an evenly paced run can read a fraction over 100% (100.4% seen): a paced run fails past
 * 1% or one request, whichever is more; a pacer that lets through more than that is wrong.
 */
const PACED_SLACK = 0.01;
function withinSlack(admitted: number, utilisation: number): boolean {
  if (!(utilisation > 1)) return true;
  const most = admitted / utilisation;
  return admitted <= Math.max(most * (1 + PACED_SLACK), most + 1);
}

/** The most any window of the plan admits over the run whatever its phase: its limit for every window the run touched. */
function burstBound(result: RunResult): number {
  const seconds = result.meta.durationSeconds;
  const bounds = result.config.windows.map((w) => w.limit * (Math.ceil(seconds / w.seconds) + 1));
  return bounds.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...bounds);
}

/** Probes, a baseline and a tenant mix's isolation: each fails a run (exit 1) whatever else decides. */
function gateParts(result: RunResult): VerdictPart[] {
  const gates: VerdictPart[] = [];
  const probes = result.probes;
  if (probes) {
    const failed = probes.filter((p) => !p.passed);
    gates.push({
      id: 'probes',
      passed: failed.length === 0,
      text:
        failed.length === 0
          ? `probes: ${probes.length} of ${probes.length} passed`
          : `probes: ${failed.length} of ${probes.length} failed (${failed.map((p) => p.id).join(', ')})`,
    });
  }
  const baseline = result.baseline;
  if (baseline) {
    const n = baseline.regressions.length;
    gates.push({
      id: 'baseline',
      passed: n === 0,
      text: `baseline: ${n === 0 ? 'no regression' : counted(n, 'regression', 'regressions')} against ${baseline.file}`,
    });
  }
  const isolation = result.isolation;
  if (isolation)
    gates.push({
      id: 'isolation',
      passed: isolation.passed,
      text: `isolation ${isolation.passed ? 'held' : 'broken'}: ${isolation.detail}`,
    });
  return gates;
}

/** The figures the capacity table gives a plan first: what its windows admitted, and where the first 429 came. */
function planFigures(r: CapacityReport): string {
  const accepted = r.rate.acceptedPerWindow.join(', ') || 'none';
  const first =
    r.exhaust.first429At === null ? `no 429 in ${r.exhaust.sent}` : `first 429 at ${r.exhaust.first429At}`;
  return `accepted ${accepted} per window of ${r.window.limit}; ${first}, want ${r.exhaust.expected429At}`;
}

/** A capacity probe's verdict is its plans': each plan's, with its reasons, then its thresholds and ban probe. */
function capacityVerdict(result: RunResult): Omit<Verdict, 'passed' | 'gates'> {
  const reports = result.capacity ?? [];
  const plans: VerdictPart[] = reports.map((r) => ({
    id: r.plan,
    passed: r.verdict === 'pass',
    text: `${r.plan}: ${r.verdict} (${planFigures(r)})`,
    reasons: r.reasons,
  }));
  const ban = result.banProbe;
  const banPart: VerdictPart[] = ban
    ? [
        {
          id: 'ban-probe',
          passed: ban.verdict === 'pass',
          text: `ban probe (${ban.plan}): ${ban.verdict}`,
          reasons: ban.reasons,
        },
      ]
    : [];
  const parts = [...plans, ...banPart, ...(result.thresholds ?? []).map(thresholdPart)];
  const failedPlans = plans.filter((p) => !p.passed).map((p) => p.id);
  const headline =
    plans.length === 0
      ? 'capacity: no plan was measured'
      : failedPlans.length === 0
        ? `capacity: ${plans.length} of ${plans.length} plans passed`
        : `capacity: ${failedPlans.length} of ${plans.length} plans failed (${failedPlans.join(', ')})`;
  const others = failedCount([...banPart, ...parts.slice(plans.length + banPart.length)]);
  return {
    kind: 'capacity',
    headline: others > 0 ? `${headline}; ${others} other check${others === 1 ? '' : 's'} failed` : headline,
    parts:
      plans.length === 0 ? [{ id: 'plans', passed: false, text: 'no plan was measured' }, ...parts] : parts,
  };
}

/** `capacity --tenants`: the number that held (none: it fails, as its exit does), and its thresholds. */
function tenantCapacityVerdict(result: RunResult): Omit<Verdict, 'passed' | 'gates'> {
  const c = result.tenantCapacity;
  const held = c !== undefined && c.held !== null;
  const parts: VerdictPart[] = [
    { id: 'tenants', passed: held, text: c?.sentence ?? 'no step ran', reasons: c?.reasons },
    ...(result.thresholds ?? []).map(thresholdPart),
  ];
  const failed = failedCount(parts);
  return {
    kind: 'tenant-capacity',
    headline: failed === 0 ? 'tenant capacity: pass' : `tenant capacity: fail (${failed} of ${parts.length})`,
    parts,
  };
}

/**
 * The verdict as plain lines (the terminal's, JUnit's): its headline, then each part when `parts`
 * (an output that lists the thresholds or the plans already shows the headline alone), then, with
 * thresholds, the compliance parts for reading.
 */
export function verdictLines(v: Verdict, parts = true): string[] {
  const mark = (p: VerdictPart) => `  ${p.passed ? 'ok  ' : 'FAIL'}  ${p.text}`;
  const reasons = (p: VerdictPart) => (p.reasons ?? []).map((r) => `          ${r}`);
  const lines = [`verdict: ${v.passed ? 'PASS' : 'FAIL'}, ${v.headline}`];
  if (parts) for (const p of [...v.parts, ...v.gates]) lines.push(mark(p), ...(p.passed ? [] : reasons(p)));
  if (v.compliance)
    lines.push(
      `  compliance, for reading (the thresholds decide): ${v.compliance.map((p) => `${p.text}${p.passed ? '' : ' (FAIL)'}`).join('; ')}`,
    );
  return lines;
}
