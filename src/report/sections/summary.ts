import type { Compliance, RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, counted, decimal, ms, percent, perSecond } from '../format.ts';
import { describeHeldByLimiter } from '../held-by-limiter.ts';
import { admittedRate } from '../quota.ts';
import { refusalNotes, refusalStatuses } from '../refusals.ts';
import { loadSpanText, runSpan, workloadRequests } from '../run-span.ts';
import { heldMostLine } from '../server-holds.ts';

type Tone = 'good' | 'bad' | 'warn' | '';

function card(id: string, label: string, value: string, note: string, tone: Tone = ''): SafeHtml {
  return html`<div class="card ${tone}" data-card="${id}"><div class="label">${label}</div>
    <div class="value">${value}</div><div class="note">${note}</div></div>`;
}

export function summaryCards(result: RunResult): SafeHtml {
  if (result.capacity) return capacityCards(result);
  const { overall, compliance } = result;
  return html`<section id="summary"><h2>Summary</h2><div class="cards">
    ${card('requests', 'requests', count(overall.requests), requestsNote(result))}
    ${card('rate', 'rate', perSecond(overall.rate), `over ${loadSpanText(result)}; plan allows ${perSecond(compliance.planRate)}`)}
    ${card('p50', 'p50 response time', ms(overall.response.p50), `service ${ms(overall.service.p50)}`)}
    ${card('p99', 'p99 response time', ms(overall.response.p99), `service ${ms(overall.service.p99)}, max ${ms(overall.response.max)}`)}
    ${refusalCard(compliance)}
    ${checksCard(result)}
    ${card('quota', 'quota utilisation', percent(compliance.quotaUtilization), `of ${decimal(admittedRate(result))} req/s the plan admits`)}
    ${card('violations', 'violations', count(compliance.violations), 'requests sent inside a Retry-After', compliance.violations > 0 ? 'bad' : 'good')}
  </div>${refusalNoteParagraphs(compliance)}${compliance.heldByLimiter ? html`<p class="muted" data-held-by-limiter>${describeHeldByLimiter(compliance.heldByLimiter)}</p>` : ''}${heldMostParagraph(result)}</section>`;
}

/** What the limiter did not admit, by kind: those the run saw at all (setup and teardown included). */
function notAdmittedKinds(result: RunResult): string {
  const { compliance, overall } = result;
  const transport = Object.values(overall.transportErrors).reduce((n, v) => n + v, 0);
  const kinds = [
    compliance.rateLimited > 0 ? 'refused by the limiter' : '',
    (compliance.unexplained ?? 0) > 0 ? 'unexplained 503s' : '',
    transport > 0 ? 'transport errors' : '',
  ].filter(Boolean);
  return kinds.length > 0 ? kinds.join(', ') : 'not answered';
}

/**
 * What the requests were: those of the load (the rates' numerator) and what the limiter admitted of
 * them, then setup and teardown's, which the total counts and the load's figures do not.
 */
function requestsNote(result: RunResult): string {
  const { overall, compliance } = result;
  const load = workloadRequests(overall, runSpan(result).seconds);
  const refused = load - compliance.admitted;
  const admitted =
    refused > 0
      ? `${count(compliance.admitted)} admitted, ${count(refused)} not (${notAdmittedKinds(result)})`
      : load > 0
        ? 'all admitted'
        : 'none sent';
  const aside = overall.requests - load;
  return [
    `${count(load)} in ${loadSpanText(result)}: ${admitted}`,
    aside > 0 ? `${count(aside)} in setup and teardown` : '',
    counted(overall.retries, 'retry', 'retries'),
  ]
    .filter(Boolean)
    .join('; ');
}

function checksCard(result: RunResult): SafeHtml {
  const passes = result.checks.reduce((sum, c) => sum + c.passes, 0);
  const failures = result.checks.reduce((sum, c) => sum + c.failures, 0);
  const evaluated = passes + failures;
  return card(
    'checks',
    'check pass rate',
    evaluated === 0 ? '–' : percent(passes / evaluated),
    evaluated === 0
      ? 'no check evaluated'
      : `${counted(failures, 'failure', 'failures')} of ${count(evaluated)}`,
    evaluated === 0 ? '' : failures > 0 ? 'bad' : 'good',
  );
}

/**
 * A capacity probe drove every plan's key at once, each to its own limit and past it on purpose:
 * a run-wide rate or a utilisation of one plan's quota means nothing there, so its cards are the
 * plans' verdicts and the figures that hold across plans; per plan, the table below says the rest.
 */
function capacityCards(result: RunResult): SafeHtml {
  const reports = result.capacity ?? [];
  const passed = reports.filter((r) => r.verdict === 'pass').length;
  const { overall } = result;
  const violations = reports.reduce((n, r) => n + r.violations, 0);
  return html`<section id="summary"><h2>Summary</h2><div class="cards">
    ${card('plans', 'plans passed', `${passed} of ${reports.length}`, "each plan's verdict in the capacity table", passed === reports.length && reports.length > 0 ? 'good' : 'bad')}
    ${card('requests', 'requests', count(overall.requests), `sent by the probes of ${counted(reports.length, 'plan', 'plans')}`)}
    ${card('p50', 'p50 response time', ms(overall.response.p50), `service ${ms(overall.service.p50)}, all plans`)}
    ${card('p99', 'p99 response time', ms(overall.response.p99), `service ${ms(overall.service.p99)}, max ${ms(overall.response.max)}`)}
    ${card('rate-limited', 'refusals', count(overall.rateLimited), "drawn on purpose: each plan's window exhausted to its first 429")}
    ${checksCard(result)}
    ${card('violations', 'violations', count(violations), 'requests sent before a Retry-After elapsed, all plans', violations > 0 ? 'bad' : 'good')}
  </div>${refusalNoteParagraphs(result.compliance)}</section>`;
}

/** A paced run its target's told budget held most of the time: said where the figures are read. */
function heldMostParagraph(result: RunResult): SafeHtml | string {
  const line = heldMostLine(result);
  return line ? html`<p class="banner partial" data-held-most>${line}</p>` : '';
}

/**
 * The 429 rate counts every refusal of the limiter, whatever its status: when one was not a 429 the
 * card says refusals and names the statuses, or a 503 among them would read as a 429.
 */
function refusalCard(c: Compliance): SafeHtml {
  const statuses = refusalStatuses(c);
  const responses = counted(c.rateLimited, 'response', 'responses');
  return card(
    'rate-limited',
    statuses === undefined ? '429 rate' : 'refusal rate',
    percent(c.rateLimitedRate),
    statuses === undefined ? responses : `${responses}: ${statuses}`,
    c.rateLimited > 0 ? 'warn' : 'good',
  );
}

/** What may have been the limiter's refusal and was counted apart, and the flag that would count it. */
function refusalNoteParagraphs(c: Compliance): SafeHtml[] {
  return refusalNotes(c).map(
    (n) =>
      html`<p class="muted" data-refusal-note="${n.id}"><strong>${n.lead}: ${count(n.count)}</strong> — ${n.why}; <code>${n.flag}</code> ${n.effect}.</p>`,
  );
}
