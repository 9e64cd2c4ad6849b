import type { AttemptRecord } from '../attempt.ts';
import type { AttemptCheck, Check, CheckContext, CheckSample } from './check.ts';
import { NOT_DECLARED, SKIP } from './check.ts';

export type { CheckSample } from './check.ts';

export interface CheckResult {
  id: string;
  rule: string;
  source: string;
  passes: number;
  failures: number;
  /**
   * Responses not judged because the document (`--contract document`) declares nothing of this
   * rule's fields for their status; absent when none was.
   */
  notDeclared?: number;
  /** The first few failures, to show what went wrong without storing every one. */
  samples: CheckSample[];
}

export const MAX_SAMPLES = 5;

/** Counts every check's verdicts: the response checks, then the checks of the client's own behaviour. */
export class CheckTally {
  private readonly results: CheckResult[];
  private readonly observers: Check[];
  private readonly settlers: { check: Check; result: CheckResult }[] = [];
  private readonly checks: readonly Check[];
  private readonly attemptChecks: readonly AttemptCheck[];

  constructor(checks: readonly Check[], attemptChecks: readonly AttemptCheck[] = []) {
    this.checks = checks;
    this.attemptChecks = attemptChecks;
    this.results = checks.map((c) => ({
      id: c.id,
      rule: c.rule,
      source: c.source,
      passes: 0,
      failures: 0,
      samples: [],
    }));
    this.observers = checks.filter((c) => c.observe !== undefined);
    checks.forEach((check, i) => {
      if (check.settle) this.settlers.push({ check, result: this.results[i] as CheckResult });
    });
  }

  /** Every attempt, transport errors included, before its response (if any) is evaluated. */
  observe(attempt: AttemptRecord): void {
    for (const c of this.observers) c.observe?.(attempt);
    for (const c of this.attemptChecks) c.observe(attempt);
  }

  /** Evaluates every check; returns how many failed. */
  evaluate(ctx: CheckContext): number {
    let failed = 0;
    for (let i = 0; i < this.checks.length; i++) {
      const outcome = (this.checks[i] as Check).evaluate(ctx);
      if (outcome === SKIP) continue;
      const result = this.results[i] as CheckResult;
      if (outcome === NOT_DECLARED) {
        result.notDeclared = (result.notDeclared ?? 0) + 1;
        continue;
      }
      if (outcome === undefined) {
        result.passes++;
        continue;
      }
      failed++;
      fail(result, ctx.attempt, outcome);
    }
    return failed;
  }

  /**
   * Counts the verdicts stateful checks can now give on earlier responses; returns the attempts that
   * failed one (an attempt may appear more than once).
   */
  settle(nowMs: number, final: boolean): AttemptRecord[] {
    const failed: AttemptRecord[] = [];
    for (const { check, result } of this.settlers) {
      for (const { attempt, outcome } of check.settle?.(nowMs, final) ?? []) {
        if (outcome === undefined) {
          result.passes++;
        } else {
          fail(result, attempt, outcome);
          failed.push(attempt);
        }
      }
    }
    return failed;
  }

  snapshot(): CheckResult[] {
    const client = this.attemptChecks.map((c) => ({
      id: c.id,
      rule: c.rule,
      source: c.source,
      ...c.counts(),
    }));
    return structuredClone([...this.results, ...client]);
  }
}

function fail(result: CheckResult, attempt: AttemptRecord, detail: string): void {
  result.failures++;
  keepEarliest(result.samples, {
    operation: attempt.operation.id,
    status: attempt.status,
    detail,
    at: attempt.receivedAt,
  });
}

/**
 * Keeps the earliest failures as samples, in time order: a verdict given later (a stateful check's)
 * may be about an earlier response than the samples kept so far.
 */
export function keepEarliest(samples: CheckSample[], sample: CheckSample): void {
  if (samples.length >= MAX_SAMPLES && sample.at >= (samples[samples.length - 1] as CheckSample).at) return;
  let i = samples.length;
  while (i > 0 && (samples[i - 1] as CheckSample).at > sample.at) i--;
  samples.splice(i, 0, sample);
  if (samples.length > MAX_SAMPLES) samples.pop();
}
