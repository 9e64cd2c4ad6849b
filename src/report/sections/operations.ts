import { errorCount } from '../../record/errors.ts';
import type { OperationInfo, OperationSummary, RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, decimal } from '../format.ts';
import { refusalStatuses } from '../refusals.ts';
import { loadSpanText, runSpan, workloadRequests } from '../run-span.ts';
import { countCell, numCell } from './cells.ts';

function badges(op: OperationInfo): SafeHtml {
  return html`${op.deprecated ? html`<span class="badge deprecated">deprecated</span>` : ''}${
    op.stability && op.stability !== 'stable'
      ? html`<span class="badge ${/^(beta|experimental)$/.test(op.stability) ? op.stability : 'beta'}">${op.stability}</span>`
      : ''
  }`;
}

function cells(op: OperationSummary, seconds: number): SafeHtml {
  const r = op.response;
  return html`${countCell(op.requests)}${countCell(workloadRequests(op, seconds))}${numCell(decimal(op.rate))}${numCell(decimal(r.p50))}${numCell(
    decimal(r.p95),
  )}${numCell(decimal(r.p99))}${countCell(op.rateLimited, true)}${countCell(errorCount(op), true)}${countCell(
    op.checkFailures,
    true,
  )}`;
}

export function operationsSection(result: RunResult): SafeHtml {
  // The column counts every refusal of the limiter: headed 429s only when each one was.
  const statuses = refusalStatuses(result.compliance);
  const { seconds } = runSpan(result);
  const span = loadSpanText(result);
  return html`<section id="operations"><h2>Operations</h2>
    <p class="muted" data-span-note>Requests count every request of the operation, setup and teardown
    included; <em>in the load</em> counts those sent while the load ran, and the rate is those over
    ${span} (setup and teardown apart). Latency columns are response time in ms. Errors are 5xx responses and transport
    errors; check failures count responses that failed at least one check.${
      statuses === undefined
        ? ''
        : html` Refused counts the limiter's refusals in every status (${statuses}).`
    }</p>
    <table data-table="operations"><thead><tr><th>operation</th><th>method</th><th>path</th>
      <th class="num">requests</th><th class="num">in the load</th><th class="num span">rate (req/s)<br><span class="muted">over ${span}</span></th><th class="num">p50</th>
      <th class="num">p95</th><th class="num">p99</th><th class="num">${statuses === undefined ? '429s' : 'refused'}</th><th class="num">errors</th>
      <th class="num">check failures</th></tr></thead>
    <tbody>${Object.entries(result.operations).map(
      ([id, op]) => html`<tr data-operation="${id}"><td><code>${id}</code>${badges(op)}</td>
        <td class="mono">${op.method}</td><td class="mono">${op.path}</td>${cells(op, seconds)}</tr>`,
    )}</tbody>
    <tfoot><tr><th colspan="3">all operations (${count(Object.keys(result.operations).length)})</th>${cells(
      result.overall,
      seconds,
    )}</tr></tfoot></table></section>`;
}

/** A result read from a file may name a key like `constructor`: only its own entries count. */
const own = (counts: Record<string, number>, key: string) =>
  Object.hasOwn(counts, key) ? (counts[key] ?? 0) : 0;

function statusClass(status: string): string {
  if (status === '429') return 'status-429';
  return /^[1-5]\d\d$/.test(status) ? `status-${status[0]}xx` : 'status-transport';
}

/** Status codes as columns (numeric order), then transport error codes, so rows line up. */
export function statusSection(result: RunResult): SafeHtml {
  const rows: [string, OperationSummary][] = [
    ['all operations', result.overall],
    ...Object.entries(result.operations),
  ];
  const statuses = [...new Set(rows.flatMap(([, op]) => Object.keys(op.statuses)))].sort(
    (a, b) => Number(a) - Number(b),
  );
  const transport = [...new Set(rows.flatMap(([, op]) => Object.keys(op.transportErrors)))].sort();
  if (statuses.length + transport.length === 0) {
    return html`<section id="statuses"><h2>Status codes</h2><p class="no-data">no data: no response was recorded</p></section>`;
  }
  return html`<section id="statuses"><h2>Status codes</h2>
    <table data-table="statuses"><thead><tr><th>operation</th>${statuses.map(
      (s) => html`<th class="num ${statusClass(s)}">${s}</th>`,
    )}${transport.map((code) => html`<th class="num status-transport" title="transport error">${code}</th>`)}</tr></thead>
    <tbody>${rows.map(
      ([name, op], i) =>
        html`<tr>${i === 0 ? html`<th>${name}</th>` : html`<td><code>${name}</code></td>`}${statuses.map(
          (s) => countCell(own(op.statuses, s)),
        )}${transport.map((code) => countCell(own(op.transportErrors, code), true))}</tr>`,
    )}</tbody></table></section>`;
}
