import type { CapacityReport } from '../../result/capacity-types.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';

const show = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(v));

function row(r: CapacityReport): SafeHtml {
  const pass = r.verdict === 'pass';
  return html`<tr data-plan="${r.plan}" class="${pass ? '' : 'failing'}"><td><code>${r.plan}</code></td>
<td class="num">${show(r.promisedPerMinute)}</td><td class="num">${show(r.promisedPerDay)}</td>
<td class="num">${r.window.limit} / ${r.window.seconds} s (×${r.timeScale})</td>
<td class="num">${r.rate.acceptedPerWindow.join(', ') || '–'}</td>
<td class="num">${r.exhaust.first429At === null ? `none in ${r.exhaust.sent}` : r.exhaust.first429At} <span class="muted">(want ${r.exhaust.expected429At})</span></td>
<td class="num">${show(r.recovery.resetErrorMs)}</td><td class="num">${show(r.recovery.retryAfterAccuracyMs)}</td>
<td title="${r.limiter.evidence.join('; ')}">${r.limiter.type}</td>
<td><span class="badge ${pass ? 'pass' : 'fail'}">${r.verdict}</span>${
    r.reasons.length > 0
      ? html`<ul class="samples">${r.reasons.map((why) => html`<li>${why}</li>`)}</ul>`
      : ''
  }</td></tr>`;
}

/** The capacity table: what each plan's key got against what the plan promises. */
export function capacitySection(result: RunResult): SafeHtml {
  const reports = result.capacity ?? [];
  return html`<section id="capacity"><h2>Capacity</h2>
<p class="muted">Per plan: the plan rate for whole windows, one window exhausted until the first 429, and the
quota's return probed only after Retry-After. Errors in ms: positive means the quota came back after the
announced time (headers carry whole seconds, so up to −1000 ms is expected).</p>
<table class="capacity"><thead><tr><th>plan</th><th>per minute</th><th>per day</th><th>window (scaled)</th>
<th>accepted per window</th><th>first 429 at</th><th>reset error ms</th><th>Retry-After error ms</th><th>limiter</th>
<th>verdict</th></tr></thead><tbody>${reports.map(row)}</tbody></table></section>`;
}
