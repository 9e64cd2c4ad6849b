import type { KeyQuota } from '../../record/quota-timeline.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, counted } from '../format.ts';
import { quotaChartId } from '../quota-chart.ts';
import { describeStoreOutage } from '../store-outages.ts';

function pausesText(k: KeyQuota): string {
  const n = k.pauses.length + (k.droppedPauses ?? 0);
  const shaded = k.droppedPauses
    ? ` (shaded: the first ${count(k.pauses.length)}; ${count(k.droppedPauses)} more were not kept)`
    : ' (shaded)';
  return n === 1
    ? `the pause after a 429${shaded}`
    : `the ${counted(n, 'pause', 'pauses')} after a 429${shaded}`;
}

/** Violations are counted for the run, not per key: with several keys the sentence says so. */
function heldText(violations: number, keys: number): string {
  if (violations === 0) return 'no request left while one held';
  const whole = keys > 1 ? ' in the whole run' : '';
  return `${counted(violations, 'request', 'requests')} left while one held${whole} (see compliance violations)`;
}

/** The sentence above a key's chart: what it shows, and whether the client kept every pause. */
export function quotaSentence(k: KeyQuota, violations: number, keys: number): string {
  const pauses = k.pauses.length + (k.droppedPauses ?? 0);
  const held = pauses > 0 ? `: ${heldText(violations, keys)}.` : ', since no 429 came.';
  const paused = pauses > 0 ? pausesText(k) : 'no pause';
  if (!k.points.some((p) => p.remainingMin !== undefined))
    return `The server announced no quota (no rate-limit headers): the requests per second, and ${paused}${held}`;
  const resets = k.points.filter((p) => p.reset).length;
  const windows = resets === 0 ? 'no window reset' : counted(resets, 'window reset', 'window resets');
  return `Remaining as the server announced it, ${windows}, and ${paused}${held}`;
}

function keyCard(k: KeyQuota, result: RunResult, points: (id: string) => number): SafeHtml {
  const id = quotaChartId(k.key);
  const requests = k.points.reduce((n, p) => n + p.requests, 0);
  const limit = k.limit === undefined ? '' : ` · limit ${count(k.limit)}`;
  const keys = result.quota?.length ?? 0;
  const chart =
    points(id) === 0
      ? html`<div class="chart" data-chart="${id}" data-points="0"><p class="no-data">no data: no response of this key was recorded</p></div>`
      : html`<div class="chart" data-chart="${id}"><noscript><p class="no-data">charts need JavaScript</p></noscript></div>`;
  return html`<div class="chart-card" data-quota-key="${k.key}">
    <h3><code>${k.key}</code> <span class="muted">${counted(requests, 'request', 'requests')}${limit}</span></h3>
    <p class="quota-sentence">${quotaSentence(k, result.compliance.violations, keys)}</p>
    ${chart}</div>`;
}

/**
 * Per key, the evidence that the client kept inside the limit: the quota as announced, its windows,
 * and every pause after a 429 beside the traffic. Absent for results of older versions.
 */
export function quotaSection(result: RunResult, points: (id: string) => number): SafeHtml {
  const outages = storeOutagesNote(result);
  if (!result.quota)
    return outages.length > 0
      ? html`<section id="quota"><h2>Quota over time</h2>${outages}</section>`
      : html``;
  const intro = html`<p class="muted">Per key and per second of the run: the Remaining the server announced
    (green steps: the last of each second, the lighter line its lowest; left axis), the requests and 429s
    per second (right axis), a dashed line where a new window began (Remaining jumped up, or the reset
    announced before passed), and, shaded, every pause the client kept after a 429, from the 429's
    arrival to the end of the pause.</p>`;
  const body =
    result.quota.length === 0
      ? html`<p class="no-data">no data: the run recorded no response, so there is no quota to plot</p>`
      : result.quota.map((k) => keyCard(k, result, points));
  return html`<section id="quota"><h2>Quota over time</h2>${outages}${intro}${body}</section>`;
}

/** Every spell in which the shared quota store was away, first: it explains the gaps in the charts. */
function storeOutagesNote(result: RunResult): SafeHtml[] {
  return (result.compliance.storeOutages ?? []).map(
    (o) => html`<p class="store-outage${o.to === undefined ? ' failing' : ''}">${describeStoreOutage(o)}</p>`,
  );
}
