import { OPERATION_TIMELINES_KEPT } from '../../record/operation-timelines.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count } from '../format.ts';
import {
  OPERATIONS_SHOWN,
  operationLatencyChartId,
  operationLatencyCoverage,
  type Percentile,
} from '../operation-latency-chart.ts';
import { chart } from './charts.ts';

const codes = (ids: string[]) => ids.map((id, i) => html`${i > 0 ? ', ' : ''}<code>${id}</code>`);

/** Which operations the lines are, and which ones are not drawn (hidden at first, or not kept). */
function coverageNote(result: RunResult): SafeHtml {
  const { drawn, hidden, notKept } = operationLatencyCoverage(result);
  const shown = drawn.length - hidden.length;
  return html`<p class="muted" data-operation-coverage>Lines drawn: the ${count(shown)} busiest
    operation${shown === 1 ? '' : 's'} by requests in the load (at most ${count(OPERATIONS_SHOWN)}).${
      hidden.length > 0 ? html` Hidden until its legend entry is clicked: ${codes(hidden)}.` : ''
    }${
      notKept.length > 0
        ? html` Left out (the result keeps the ${count(OPERATION_TIMELINES_KEPT)} busiest operations' seconds): ${codes(notKept)}.`
        : ''
    }</p>`;
}

/**
 * The per-operation latency a reader looks for when one endpoint regresses: each operation's p99 and
 * p50 per second, one line per operation, on the run timeline's clock.
 */
export function operationLatencySection(result: RunResult, points: (id: string) => number): SafeHtml {
  const kept = result.operationTimelines !== undefined;
  const empty = kept
    ? 'no response was recorded while the load ran'
    : 'this result keeps no per-operation seconds (written by an older version)';
  const card = (percentile: Percentile, title: string) => {
    const id = operationLatencyChartId(percentile);
    return html`<div class="chart-card"><h3>${title}</h3>${chart(id, points(id), empty)}</div>`;
  };
  return html`<section id="latency-by-operation"><h2>Latency by operation</h2>
    <p class="muted">Per second of the load, each operation's service time (sent to received): p99 above,
    p50 below, one line per operation. A second without a response of an operation has no percentile:
    its line joins the seconds either side. With no second pointed at, the legend gives each
    operation's percentile over the whole run; clicking an entry shows or hides its line.</p>
    ${kept ? coverageNote(result) : ''}
    ${card('p99', 'p99 service time per second')}
    ${card('p50', 'p50 service time per second')}
  </section>`;
}
