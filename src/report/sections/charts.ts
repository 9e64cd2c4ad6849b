import type { RunResult } from '../../result/types.ts';
import { latencyChartId, OVERALL_LATENCY, TIMELINE, TIMELINE_WAITS } from '../chart-data.ts';
import { html, type SafeHtml } from '../escape.ts';
import { counted } from '../format.ts';

/**
 * Chart containers. Emptiness is decided here, in Node: an empty chart is a "no data" message in
 * the markup itself (data-points="0"), so it reads right even where the script does not run.
 */
export function chart(id: string, points: number, empty: string): SafeHtml {
  if (points === 0)
    return html`<div class="chart" data-chart="${id}" data-points="0"><p class="no-data">no data: ${empty}</p></div>`;
  return html`<div class="chart" data-chart="${id}"><noscript><p class="no-data">charts need JavaScript</p></noscript></div>`;
}

/**
 * One percentile chart at a time, an operation picked from a list: drawn side by side, one per
 * operation, they filled five screens ahead of everything else. Every operation's chart is still in
 * the page (drawn, hidden but one), so picking one shows it at once, with no redraw from data.
 */
export function latencySection(result: RunResult, points: (id: string) => number): SafeHtml {
  const noResponse = 'no response was recorded';
  const panels = [
    {
      id: OVERALL_LATENCY,
      label: 'all operations',
      title: html`all operations <span class="muted">· ${counted(result.overall.requests, 'request', 'requests')}</span>`,
      empty: noResponse,
    },
    ...Object.entries(result.operations).map(([id, op]) => ({
      id: latencyChartId(id),
      label: id,
      title: html`<code>${id}</code> <span class="muted">${op.method} ${op.path} · ${counted(op.requests, 'request', 'requests')}</span>`,
      empty: `${noResponse} for ${id}`,
    })),
  ];
  return html`<section id="latency"><h2>Latency percentile distribution</h2>
    <p class="muted">HdrHistogram style: x is the percentile on a log scale of 1/(1−p), so 90%, 99%, 99.9%
    are evenly spaced; y is the latency in ms. Service time runs from sent to received; response time
    from when the request was due, which counts the queueing a slow server causes (less our own pacing
    and backoff waits).</p>
    <p><label for="latency-operation">operation</label> <select id="latency-operation" data-latency-select>${panels.map(
      (p, i) => html`<option value="${p.id}"${i === 0 ? html` selected` : ''}>${p.label}</option>`,
    )}</select></p>
    ${panels.map(
      (p, i) =>
        html`<div class="chart-card" data-latency-panel="${p.id}"${i === 0 ? '' : html` hidden`}><h3>${p.title}</h3>${chart(p.id, points(p.id), p.empty)}</div>`,
    )}
  </section>`;
}

export function timelineSection(points: (id: string) => number): SafeHtml {
  const empty = 'the run recorded no response, so there is no second to plot';
  return html`<section id="timeline"><h2>Timeline</h2>
    <p class="muted">Per second of the run: requests, 429 responses, errors (5xx and transport) and the
    p99 service time; below, the time spent waiting in that second for pacing (the plan's quota) and
    for backoff (after a 429 or an error), summed over virtual users.</p>
    <div class="chart-card">${chart(TIMELINE, points(TIMELINE), empty)}</div>
    <div class="chart-card">${chart(TIMELINE_WAITS, points(TIMELINE_WAITS), empty)}</div>
  </section>`;
}
