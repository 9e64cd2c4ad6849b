import type { RunResult } from '../result/types.ts';
import { refusalLines } from './refusals.ts';
import { verdictLines, verdictOf } from './verdict.ts';

/** XML 1.0 text: the five entities, and no control characters (a server's error text may hold any). */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

interface Case {
  name: string;
  classname: string;
  failure?: { message: string; body: string };
  /** What a reader of a passed case should still know (JUnit's `system-out`). */
  out?: string;
}

function suite(name: string, cases: Case[], timestamp: string, seconds: number): string {
  const failures = cases.filter((c) => c.failure).length;
  const body = cases
    .map((c) => {
      const open = `    <testcase name="${xml(c.name)}" classname="${xml(c.classname)}" time="0">`;
      const out = c.out ? `\n      <system-out>${xml(c.out)}</system-out>` : '';
      if (!c.failure) return out ? `${open}${out}\n    </testcase>` : `${open}</testcase>`;
      return `${open}\n      <failure message="${xml(c.failure.message)}" type="failure">${xml(c.failure.body)}</failure>${out}\n    </testcase>`;
    })
    .join('\n');
  return `  <testsuite name="${xml(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0" timestamp="${xml(timestamp)}" time="${seconds}">\n${body}\n  </testsuite>`;
}

/**
 * JUnit XML, the format every CI system renders: one testcase per threshold, check, compliance
 * probe, baseline regression and tier of a tenant mix's isolation verdict, so a failed gate shows
 * in the pipeline's test view with the figure that failed it; and last, the result's one verdict.
 */
export function renderJUnit(result: RunResult): string {
  const scenario = result.meta.scenario;
  const timestamp = result.meta.startedAt.replace(/Z$/, '');
  const seconds = result.meta.durationSeconds;
  const thresholds: Case[] = (result.thresholds ?? []).map((t) => {
    const c: Case = { name: t.expression, classname: `${scenario}.thresholds` };
    if (!t.passed) {
      const message = t.detail ?? 'failed';
      c.failure = { message, body: `${t.expression} (${t.source}): ${message}` };
    }
    return c;
  });
  const checks: Case[] = result.checks.map((check) => {
    const c: Case = { name: check.id, classname: `${scenario}.checks` };
    if (check.failures > 0) {
      const message = `${check.failures} of ${check.passes + check.failures} responses failed: ${check.rule}`;
      const samples = check.samples
        .map((s) => `${s.operation} ${s.status} at ${new Date(s.at).toISOString()}: ${s.detail}`)
        .join('\n');
      c.failure = { message, body: `${message}\nsource: ${check.source}\n${samples}` };
    }
    return c;
  });
  const probes: Case[] = (result.probes ?? []).map((probe) => {
    const c: Case = { name: probe.id, classname: `${scenario}.probes` };
    if (!probe.passed) {
      const message = `expected ${probe.expected}; got ${probe.actual}`;
      c.failure = {
        message,
        body: `${probe.description}\n${message}${probe.detail ? `\n${probe.detail}` : ''}`,
      };
    }
    return c;
  });
  const baseline: Case[] = [];
  if (result.baseline) {
    const { file, regressions } = result.baseline;
    const classname = `${scenario}.baseline`;
    if (regressions.length === 0) baseline.push({ name: `no regression against ${file}`, classname });
    for (const r of regressions) {
      const message = `${r.operation} ${r.metric}: ${r.baseline} -> ${r.current}, a significant regression beyond tolerance`;
      baseline.push({
        name: `${r.operation} ${r.metric}`,
        classname,
        failure: { message, body: `${message} (baseline ${file})` },
      });
    }
  }
  const isolation = isolationCases(result);
  tellRefusals(result, [...thresholds, ...checks]);
  const verdict = [verdictCase(result)];
  const all = [...thresholds, ...checks, ...probes, ...baseline, ...isolation, ...verdict];
  const failures = all.filter((c) => c.failure).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="petstore-load ${xml(scenario)}" tests="${all.length}" failures="${failures}" errors="0" time="${seconds}">`,
    suite(`${scenario} thresholds`, thresholds, timestamp, seconds),
    suite(`${scenario} checks`, checks, timestamp, seconds),
    ...(result.probes ? [suite(`${scenario} probes`, probes, timestamp, seconds)] : []),
    ...(result.baseline ? [suite(`${scenario} baseline`, baseline, timestamp, seconds)] : []),
    ...(result.isolation ? [suite(`${scenario} isolation`, isolation, timestamp, seconds)] : []),
    suite(`${scenario} verdict`, verdict, timestamp, seconds),
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * The result's one verdict (verdict.ts), as the report and the summaries show it: one case, named
 * the same in every run so that a CI's test history follows it, failed when the verdict is, its
 * parts in the text. Without thresholds it is the compliance verdict, which fails no exit code.
 */
function verdictCase(result: RunResult): Case {
  const v = verdictOf(result);
  const c: Case = { name: 'verdict', classname: `${result.meta.scenario}.verdict` };
  const text = verdictLines(v).join('\n');
  if (v.passed) c.out = text;
  else c.failure = { message: v.headline, body: text };
  return c;
}

/** A tenant mix's noisy-neighbour verdict: a testcase per plan whose compliant tenants were judged. */
function isolationCases(result: RunResult): Case[] {
  const v = result.isolation;
  if (!v) return [];
  const classname = `${result.meta.scenario}.isolation`;
  const noisy = v.noisyGroups.join(', ');
  return Object.entries(v.tiers).map(([plan, t]) => {
    const c: Case = { name: `${plan} beside ${noisy}`, classname };
    if (!t.passed) {
      const message = t.reason ?? 'failed';
      const { before: b, after: a } = t;
      c.failure = {
        message,
        body: `${plan}: ${message}\nbefore ${noisy} started: ${b.requests} requests, p50 ${b.p50Ms} ms, p99 ${b.p99Ms} ms, ${b.rateLimited} 429s, ${b.errors} errors\nafter: ${a.requests} requests, p50 ${a.p50Ms} ms, p99 ${a.p99Ms} ms, ${a.rateLimited} 429s, ${a.errors} errors\none-sided p-value of the slowdown: ${t.pValue ?? 'not tested'}`,
      };
    }
    return c;
  });
}

/** `rate_limited<1%`, `listPets:rate_limited<1%`, `plan:free:rate_limited<1%`: a 429 rate's threshold. */
const RATE_LIMITED = /(?:^|:)rate_limited\s*[<>=!]/;
const REFUSAL_CHECK = 'refusal-is-429';

/**
 * The cases that judge a 429 rate or the refusals' status say what they counted: the 429 rate counts
 * every refusal of the limiter whatever its status, and a bare 503 or a bare 403 after admissions is
 * counted apart. A failed case says it in its failure's text, a passed one in its system-out.
 */
function tellRefusals(result: RunResult, cases: Case[]): void {
  const lines = refusalLines(result.compliance);
  if (lines.length === 0) return;
  const text = lines.join('\n');
  for (const c of cases) {
    const judgesRefusals = c.classname.endsWith('.checks')
      ? c.name === REFUSAL_CHECK
      : RATE_LIMITED.test(c.name);
    if (!judgesRefusals) continue;
    if (c.failure) c.failure.body += `\n${text}`;
    else c.out = text;
  }
}
