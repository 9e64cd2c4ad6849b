import type { Check, CheckContext } from './check.ts';
import { SKIP } from './check.ts';

export interface CheckSample {
  operation: string;
  status: number;
  detail: string;
  /** Epoch ms of the response. */
  at: number;
}

export interface CheckResult {
  id: string;
  rule: string;
  source: string;
  passes: number;
  failures: number;
  /** The first few failures, to show what went wrong without storing every one. */
  samples: CheckSample[];
}

const MAX_SAMPLES = 5;

export class CheckTally {
  private readonly results: CheckResult[];
  constructor(private readonly checks: readonly Check[]) {
    this.results = checks.map((c) => ({
      id: c.id,
      rule: c.rule,
      source: c.source,
      passes: 0,
      failures: 0,
      samples: [],
    }));
  }

  /** Evaluates every check; returns how many failed. */
  evaluate(ctx: CheckContext): number {
    let failed = 0;
    for (let i = 0; i < this.checks.length; i++) {
      const outcome = (this.checks[i] as Check).evaluate(ctx);
      if (outcome === SKIP) continue;
      const result = this.results[i] as CheckResult;
      if (outcome === undefined) {
        result.passes++;
        continue;
      }
      result.failures++;
      failed++;
      if (result.samples.length < MAX_SAMPLES) {
        result.samples.push({
          operation: ctx.op.id,
          status: ctx.status,
          detail: outcome,
          at: ctx.attempt.receivedAt,
        });
      }
    }
    return failed;
  }

  snapshot(): CheckResult[] {
    return structuredClone(this.results);
  }
}
