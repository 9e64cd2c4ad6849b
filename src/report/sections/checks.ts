import type { CheckResult, CheckSample } from '../../record/checks/tally.ts';
import { describeHeaderDialect } from '../../record/dialects.ts';
import type { ResultMeta, RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, counted, decimal, percent } from '../format.ts';
import { countCell } from './cells.ts';

/**
 * Times as an offset into the workload (what the timeline's x axis shows), the wall-clock time in
 * the tooltip. Setup runs before the workload starts and teardown after it ends: say which.
 */
export function runTime(at: number, meta: ResultMeta): SafeHtml {
  const start = Date.parse(meta.startedAt);
  const end = Date.parse(meta.endedAt);
  const wall = Number.isFinite(at) ? new Date(at).toISOString() : String(at);
  if (!Number.isFinite(start) || !Number.isFinite(at)) return html`<span class="mono">${wall}</span>`;
  const offset = (at - start) / 1000;
  const phase = offset < 0 ? ' (setup)' : at > end ? ' (teardown)' : '';
  return html`<span class="mono" title="${wall}">${offset < 0 ? '−' : '+'}${Math.abs(offset).toFixed(3)} s</span>${phase}`;
}

function sample(s: CheckSample, meta: ResultMeta): SafeHtml {
  return html`<li><code>${s.operation}</code> status <strong>${s.status}</strong> at ${runTime(s.at, meta)}:
    <span class="detail">${s.detail}</span></li>`;
}

function row(c: CheckResult, meta: ResultMeta): SafeHtml {
  const evaluated = c.passes + c.failures;
  const notDeclared = c.notDeclared ?? 0;
  const rate =
    evaluated === 0
      ? html`<span class="muted">${notDeclared > 0 ? 'not declared' : 'not evaluated'}</span>`
      : percent(c.passes / evaluated);
  const more = c.failures - c.samples.length;
  return html`<tr data-check="${c.id}" class="${c.failures > 0 ? 'failing' : ''}"><td><code>${c.id}</code>${
    c.failures > 0
      ? html`<span class="badge fail">failing</span>`
      : evaluated > 0
        ? html`<span class="badge pass">pass</span>`
        : ''
  }${
    notDeclared > 0
      ? html`<div class="muted" data-not-declared="${notDeclared}">${counted(notDeclared, 'response', 'responses')} not judged: the document declares nothing of it for their status</div>`
      : ''
  }</td><td>${c.rule}</td><td class="muted">${c.source}</td>${countCell(c.passes)}${countCell(
    c.failures,
    true,
  )}<td class="num">${rate}</td></tr>${
    c.failures > 0
      ? html`<tr class="failing" data-samples="${c.id}"><td></td><td colspan="5"><ul class="samples">${c.samples.map(
          (s) => sample(s, meta),
        )}</ul>${more > 0 ? html`<div class="muted">… and ${counted(more, 'more failure', 'more failures')} (the result keeps the first ${c.samples.length})</div>` : ''}</td></tr>`
      : ''
  }`;
}

function violations(result: RunResult): SafeHtml {
  const { violations: n, violationSamples } = result.compliance;
  if (n === 0)
    return html`<p class="muted">No request was sent inside a <code>Retry-After</code> window.</p>`;
  return html`<h3>Requests sent inside a Retry-After window: ${count(n)}</h3><ul class="samples">${violationSamples.map(
    (v) =>
      html`<li><code>${v.operation}</code> sent at ${runTime(v.sentAt, result.meta)}, ${decimal(
        v.pauseUntil - v.sentAt,
      )} ms before the pause ended</li>`,
  )}</ul>`;
}

/** Which dialect the rate-limit checks read, and which one they judged as promised. */
function headerDialect(result: RunResult): SafeHtml {
  const h = result.compliance.headerDialect;
  if (!h) return html``;
  return html`<p data-header-dialect="${h.detected}" data-contract="${h.contract}">Rate-limit headers: ${describeHeaderDialect(h)}.</p>`;
}

export function checksSection(result: RunResult): SafeHtml {
  const body =
    result.checks.length === 0
      ? html`<p class="no-data">no data: no check was run</p>`
      : html`<table data-table="checks"><thead><tr><th>check</th><th>rule</th><th>source</th>
        <th class="num">passes</th><th class="num">failures</th><th class="num">pass rate</th></tr></thead>
        <tbody>${result.checks.map((c) => row(c, result.meta))}</tbody></table>`;
  return html`<section id="checks"><h2>Checks</h2>${headerDialect(result)}${body}${violations(result)}</section>`;
}
