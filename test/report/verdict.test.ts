import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatSummary } from '../../src/cli/summary.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { renderJUnit } from '../../src/report/junit.ts';
import { renderSummaryMarkdown } from '../../src/report/summary-md.ts';
import { verdictOf } from '../../src/report/verdict.ts';
import type { CapacityReport } from '../../src/result/capacity-types.ts';
import type { RunResult, TierSummary } from '../../src/result/types.ts';
import { ladder, mixedRefusals, syntheticResult } from '../helpers/synthetic-result.ts';
import { THRESHOLDS } from './real-run.ts';

/**
 * One verdict on every result, computed once and shown alike by the report's top box, the terminal
 * summary, the markdown summary and JUnit: thresholds where declared, a capacity probe's plans, and
 * otherwise the compliance verdict part by part.
 */

let clean: RunResult;

beforeAll(async () => {
  clean = await syntheticResult(ladder('listPets', 20));
  // Synthetic requests come faster than any plan: utilisation set as a paced run's would be.
  clean.compliance.quotaUtilization = 0.998;
});

const copy = (patch: (r: RunResult) => void = () => {}): RunResult => {
  const r = structuredClone(clean);
  patch(r);
  return r;
};

/** A plan's row as `capacity` writes it (the reference server's free plan, time scale 10). */
function planReport(plan: string, verdict: 'pass' | 'fail', reasons: string[] = []): CapacityReport {
  return {
    plan,
    timeScale: 10,
    window: { name: 'minute', limit: 60, seconds: 6 },
    promisedPerMinute: 60,
    promisedPerDay: 1000,
    rate: {
      windows: 2,
      sent: 120,
      acceptedPerWindow: [60, 60],
      rateLimited: 0,
      acceptedPerMinute: 60,
      resetValuesPerWindow: [1, 1],
    },
    exhaust: {
      sent: 61,
      accepted: 60,
      first429At: 61,
      expected429At: 61,
      headers: [],
      retryAfterSeconds: 6,
      reset: null,
    },
    recovery: {
      probes: 1,
      announcedRetryAt: null,
      announcedResetAt: null,
      quotaBackAt: null,
      resetErrorMs: -841,
      resetAccuracyMs: 841,
      retryAfterAccuracyMs: 1,
      remainingAtReturn: 59,
      remainingAfterTenth: 58,
    },
    limiter: {
      type: 'fixed-window',
      evidence: [],
      headerDialect: 'seed',
      resetSemantics: 'unix-seconds',
      sustainedPerSecond: 10,
      burst: 60,
      window: { limit: 60, seconds: 6 },
      rateSearch: null,
    },
    violations: 0,
    verdict,
    reasons,
    durationMs: 19_709,
  };
}

/** A capacity result: four plans probed at once, their run-wide figures meaningless as one plan's. */
const capacity = (failing = false) =>
  copy((r) => {
    r.meta.scenario = 'capacity';
    r.config.enforce = false;
    r.compliance.quotaUtilization = 56.7;
    r.compliance.planRate = 10;
    r.capacity = [
      planReport('free', 'pass'),
      planReport('pro', failing ? 'fail' : 'pass', failing ? ['first 429 at 250, want 301'] : []),
    ];
  });

/** The top box of the report: the verdict section's banner. */
const box = (r: RunResult) =>
  renderHtmlReport(r).match(/<section id="verdict">.*?<\/section>/s)?.[0] as string;

describe('the verdict of a result', () => {
  it('without thresholds: the compliance verdict, each part a pass with its reason', () => {
    const v = verdictOf(clean);
    expect(v).toMatchObject({
      kind: 'compliance',
      passed: true,
      headline: 'compliance: 4 of 4 parts passed',
    });
    expect(v.parts.map((p) => [p.id, p.passed, p.text])).toEqual([
      ['checks', true, `checks: ${clean.checks.length} of ${clean.checks.length} passed`],
      ['violations', true, 'violations: 0'],
      ['refusals', true, '429s: 0 of 20'],
      ['utilisation', true, 'utilisation 99.8% of the quota, within it'],
    ]);
  });

  it('a violation fails it, named in the headline and its part', () => {
    const v = verdictOf(copy((r) => (r.compliance.violations = 3)));
    expect(v.passed).toBe(false);
    expect(v.headline).toBe('compliance: 1 of 4 parts failed (violations)');
    expect(v.parts.find((p) => p.id === 'violations')).toEqual({
      id: 'violations',
      passed: false,
      text: 'violations: 3 requests sent inside a Retry-After',
    });
  });

  it('a failed check fails it, naming the check', () => {
    const v = verdictOf(copy((r) => Object.assign(r.checks[0] as object, { failures: 2 })));
    expect(v.headline).toBe('compliance: 1 of 4 parts failed (checks)');
    expect(v.parts[0]?.text).toMatch(
      new RegExp(`^checks: 1 of \\d+ failed \\(${clean.checks[0]?.id} on 2 responses\\)$`),
    );
  });

  it('refusals fail a paced run, not a raw one, whose refusals are how it learns the limit', async () => {
    const refused = await mixedRefusals();
    const part = () => verdictOf(refused).parts.find((p) => p.id === 'refusals');
    expect(part()).toEqual({
      id: 'refusals',
      passed: false,
      text: "refusals: 15 of 38 (429: 12, 503: 3) to a paced client, which the plan's pace should draw none of",
    });
    refused.config.enforce = false;
    expect(part()?.passed).toBe(true);
    expect(part()?.text).toMatch(/^refusals: 15 of 38 \(429: 12, 503: 3\), expected in raw mode/);
  });

  it('utilisation over the quota fails a paced run; a raw burst within its windows does not', () => {
    const over = copy((r) => (r.compliance.quotaUtilization = 1.19));
    expect(verdictOf(over).parts.find((p) => p.id === 'utilisation')).toMatchObject({
      passed: false,
      text: "utilisation 119% of the quota, over it: the pacing let through more than the plan's windows admit",
    });
    // Raw, a 5 s burst into a 6 s window of 60 admits 60: over the even pace, within the plan.
    const burst = copy((r) => {
      Object.assign(r.compliance, { quotaUtilization: 1.19, admitted: 60 });
      r.config.enforce = false;
      r.config.windows = [{ name: 'minute', limit: 60, seconds: 6 }];
      r.meta.durationSeconds = 5;
    });
    expect(verdictOf(burst).parts.find((p) => p.id === 'utilisation')).toMatchObject({ passed: true });
    burst.compliance.admitted = 121;
    expect(verdictOf(burst).parts.find((p) => p.id === 'utilisation')).toMatchObject({ passed: false });
  });

  it("a tenant mix's paced tier gets the same slack; a raw-mode group is not judged", () => {
    const tier = (enforce: boolean, admitted: number, overall: number) =>
      ({ plan: 'free', enforce, admitted, utilization: { overall, min: 0, p50: 0, max: 0 } }) as TierSummary;
    const part = (tiers: TierSummary[]) =>
      verdictOf(
        copy((r) => {
          r.compliance.quotaUtilization = 1.2;
          r.byPlan = Object.fromEntries(tiers.map((t, i) => [`t${i}`, t]));
        }),
      ).parts.find((p) => p.id === 'utilisation');
    expect(part([tier(true, 229, 1.004), tier(false, 500, 3)])).toMatchObject({ passed: true });
    expect(part([tier(true, 1000, 1.05)])).toMatchObject({ passed: false });
  });

  it("a paced run a fraction over 100% is within the span's measure; 2% over is not", () => {
    const part = (admitted: number, utilisation: number) =>
      verdictOf(
        copy((r) => Object.assign(r.compliance, { admitted, quotaUtilization: utilisation })),
      ).parts.find((p) => p.id === 'utilisation');
    expect(part(229, 1.004)).toMatchObject({ passed: true });
    expect(part(1000, 1.02)).toMatchObject({ passed: false });
    // One request over a small quota is the measure's too: 11 of a most of 10.
    expect(part(11, 1.1)).toMatchObject({ passed: true });
  });

  it('a run that completed no iteration fails, whatever its figures of nothing', () => {
    const idle = copy((r) => (r.workload.iterations = 0));
    expect(verdictOf(idle)).toMatchObject({
      passed: false,
      headline: 'compliance: 1 of 5 parts failed (iterations)',
    });
    // Iterations that completed without a request (setup's alone were sent): exit 5, and no green.
    const silent = copy((r) => (r.overall.rate = 0));
    expect(verdictOf(silent)).toMatchObject({
      passed: false,
      headline: 'compliance: 1 of 5 parts failed (requests)',
    });
    expect(verdictOf(silent).parts[0]?.text).toMatch(
      /^requests: the workload sent none in its \d+ iterations?/,
    );
  });

  it('with thresholds: the thresholds decide, the compliance parts are for reading', () => {
    const v = verdictOf(
      copy((r) => {
        r.thresholds = THRESHOLDS;
        r.compliance.violations = 1;
      }),
    );
    expect(v).toMatchObject({ kind: 'thresholds', passed: false, headline: 'thresholds: 1 of 2 failed' });
    expect(v.parts.map((p) => [p.id, p.passed])).toEqual([
      ['p99<500ms', true],
      ['checks>99.9%', false],
    ]);
    expect(v.compliance?.find((p) => p.id === 'violations')?.passed).toBe(false);
    const passing = verdictOf(copy((r) => (r.thresholds = [THRESHOLDS[0]!])));
    expect(passing).toMatchObject({ passed: true, headline: 'thresholds: 1 of 1 passed' });
  });

  it("a capacity result's verdict is its plans'", () => {
    expect(verdictOf(capacity())).toMatchObject({
      kind: 'capacity',
      passed: true,
      headline: 'capacity: 2 of 2 plans passed',
    });
    const failing = verdictOf(capacity(true));
    expect(failing).toMatchObject({ passed: false, headline: 'capacity: 1 of 2 plans failed (pro)' });
    expect(failing.parts[1]).toMatchObject({
      id: 'pro',
      passed: false,
      reasons: ['first 429 at 250, want 301'],
    });
  });

  it('probes, a baseline and isolation fail it beside what decides', () => {
    const v = verdictOf(
      copy((r) => {
        r.baseline = {
          file: 'base.json',
          improvements: 0,
          regressions: [{ operation: 'all', metric: 'p99', baseline: 1, current: 2 }],
        };
      }),
    );
    expect(v).toMatchObject({
      passed: false,
      headline: 'compliance: 4 of 4 parts passed; baseline: 1 regression against base.json',
    });
  });
});

describe('the verdict at the top of the report', () => {
  it('a run without thresholds: green, its compliance parts each with its reason', () => {
    const b = box(clean);
    expect(b).toMatch(/class="banner passed" data-verdict="passed" data-verdict-kind="compliance"/);
    expect(b).toContain('PASS · compliance: 4 of 4 parts passed');
    expect(b).toContain('violations: 0');
    expect(b).toContain('utilisation 99.8% of the quota, within it');
    expect(b).not.toContain('nothing to pass or fail');
    expect(b).not.toContain('for reading.');
  });

  it('a run with a failing threshold: red, naming it, the compliance parts apart', () => {
    const b = box(copy((r) => (r.thresholds = THRESHOLDS)));
    expect(b).toMatch(/class="banner failed" data-verdict="failed" data-verdict-kind="thresholds"/);
    expect(b).toContain('FAIL · thresholds: 1 of 2 failed');
    expect(b).toMatch(
      /data-part="checks&gt;99.9%" data-passed="false">.*97.4% of checks passed, below 99.9%/,
    );
    expect(b).toMatch(/data-verdict-compliance>.*violations: 0/s);
  });

  it('a capacity result: the plans, and no card of a single paced run', () => {
    const page = renderHtmlReport(capacity(true));
    const b = box(capacity(true));
    expect(b).toMatch(/data-verdict="failed" data-verdict-kind="capacity"/);
    expect(b).toContain('FAIL · capacity: 1 of 2 plans failed (pro)');
    expect(b).toMatch(
      /data-part="free" data-passed="true">.*free: pass \(accepted 60, 60 per window of 60; first 429 at 61, want 61\)/,
    );
    expect(b).toContain('first 429 at 250, want 301');
    // The table below gives the same verdicts.
    expect(page).toMatch(/<tr data-plan="pro" class="failing">/);
    const summary = page.match(/<section id="summary">.*?<\/section>/s)?.[0] as string;
    expect(summary).toContain('data-card="plans"');
    expect(summary).not.toContain('data-card="quota"');
    expect(summary).not.toContain('data-card="rate"');
    expect(summary).not.toContain('plan allows');
    expect(page).not.toContain('quota utilisation');
    // The header names the plans probed, not one plan called "free,pro".
    expect(page).toMatch(/class="subtitle">plans free, pro ·/);
  });
});

describe('every output shows the same verdict', () => {
  const junitVerdict = (r: RunResult) => {
    const doc = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '',
      isArray: (n) => n === 'testsuite' || n === 'testcase',
    }).parse(renderJUnit(r));
    const suite = doc.testsuites.testsuite.at(-1);
    return { name: suite.name as string, case: suite.testcase[0] };
  };

  it('markdown and JUnit: a clean run without thresholds', () => {
    const md = renderSummaryMarkdown(clean).split('\n');
    expect(md[0]).toBe('### ✅ petstore-load: synthetic: compliance: 4 of 4 parts passed');
    expect(md).toContain('- ✅ utilisation 99.8% of the quota, within it');
    const j = junitVerdict(clean);
    expect(j.name).toBe('synthetic verdict');
    expect(j.case.name).toBe('verdict');
    expect(j.case.failure).toBeUndefined();
    expect(j.case['system-out']).toContain('verdict: PASS, compliance: 4 of 4 parts passed');
    expect(formatSummary(clean, 'result.json')).toContain(
      'verdict: PASS, compliance: 4 of 4 parts passed\n  ok    checks:',
    );
  });

  it('markdown and JUnit: a violation', () => {
    const r = copy((x) => (x.compliance.violations = 2));
    expect(renderSummaryMarkdown(r).split('\n')[0]).toBe(
      '### ❌ petstore-load: synthetic: compliance: 1 of 4 parts failed (violations)',
    );
    expect(renderSummaryMarkdown(r)).toContain('- ❌ violations: 2 requests sent inside a Retry-After');
    const j = junitVerdict(r);
    expect(j.case.failure.message).toBe('compliance: 1 of 4 parts failed (violations)');
    expect(j.case.failure['#text']).toContain('FAIL  violations: 2 requests sent inside a Retry-After');
    expect(formatSummary(r, 'result.json')).toContain(
      '  FAIL  violations: 2 requests sent inside a Retry-After',
    );
  });

  it('markdown and JUnit: a capacity result, by its plans', () => {
    const r = capacity(true);
    const md = renderSummaryMarkdown(r);
    expect(md.split('\n')[0]).toBe('### ❌ petstore-load: capacity: capacity: 1 of 2 plans failed (pro)');
    expect(md).toContain(
      '| pro | 60 / 6 s | 60, 60 | 61 (want 61) | -841 | fixed-window | ❌ first 429 at 250, want 301 |',
    );
    expect(md).not.toContain('quota used');
    expect(junitVerdict(r).case.failure.message).toBe('capacity: 1 of 2 plans failed (pro)');
  });
});
