import type { ProbeResult } from '../../result/probe-types.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';

function row(p: ProbeResult): SafeHtml {
  return html`<tr data-probe="${p.id}" class="${p.passed ? '' : 'failing'}"><td><code>${p.id}</code>${
    p.passed ? html`<span class="badge pass">pass</span>` : html`<span class="badge fail">fail</span>`
  }<div class="muted">${p.description}</div></td><td>${p.expected}</td><td>${p.actual}${
    p.detail ? html`<div class="detail">${p.detail}</div>` : ''
  }</td><td class="muted">${p.source ?? ''}</td><td class="num">${p.requests}</td></tr>`;
}

/** The compliance battery's pass/fail matrix (only for a run that had one). */
export function probesSection(result: RunResult): SafeHtml | '' {
  const probes = result.probes;
  if (!probes) return '';
  const failed = probes.filter((p) => !p.passed).length;
  const verdict =
    probes.length === 0
      ? html`<p class="no-data">no data: the battery ran no probe</p>`
      : failed === 0
        ? html`<div class="banner passed" data-probes="passed"><strong>all ${probes.length} probes passed</strong></div>`
        : html`<div class="banner failed" data-probes="failed"><strong>${failed} of ${probes.length} probes failed</strong></div>`;
  return html`<section id="probes"><h2>Compliance probes</h2>${verdict}${
    probes.length > 0
      ? html`<table data-table="probes"><thead><tr><th>probe</th><th>expected</th><th>actual</th>
        <th>source</th><th class="num">requests</th></tr></thead><tbody>${probes.map(row)}</tbody></table>`
      : ''
  }</section>`;
}
