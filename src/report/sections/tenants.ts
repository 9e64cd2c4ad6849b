import type { IsolationStretch, IsolationTier, RunResult, TierSummary } from '../../result/types.ts';
import { ALPHA, describeP, MIN_SAMPLES, SLOWDOWN_MS, SLOWDOWN_RATIO } from '../../stats/isolation.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, decimal, percent } from '../format.ts';
import { countCell, numCell } from './cells.ts';

/** Plans first, then the named groups, each marked: a group is one customer, not a plan's tenants. */
function tierRow(name: string, t: TierSummary, group: boolean): SafeHtml {
  const u = t.utilization;
  return html`<tr data-tier="${name}"${group ? html` data-group="true"` : ''}><td><code>${name}</code>${
    group ? html`<span class="badge" title="a named group, kept apart from its plan's tier">group</span>` : ''
  }${t.enforce ? '' : html`<span class="badge" title="pacing off: the group exceeds its quota on purpose">raw</span>`}${
    group && name !== t.plan ? html` <span class="muted">${t.plan}</span>` : ''
  }</td>
<td class="num" title="tenants that sent a request / declared">${count(t.keysSeen)} / ${count(t.keys)}</td>
${countCell(t.requests)}${numCell(decimal(t.rate))}${numCell(decimal(t.response.p50))}${numCell(decimal(t.response.p99))}
${countCell(t.rateLimited, t.enforce)}${countCell(t.violations, true)}${countCell(t.errors, true)}
${numCell(percent(u.overall))}${numCell(percent(u.min))}${numCell(percent(u.p50))}${numCell(percent(u.max))}</tr>`;
}

function tiersTable(result: RunResult): SafeHtml {
  const plans = Object.entries(result.byPlan ?? {});
  const groups = Object.entries(result.byTenantGroup ?? {});
  return html`<table data-table="tiers"><thead><tr><th rowspan="2">tier</th><th class="num" rowspan="2">keys</th>
<th class="num" rowspan="2">requests</th><th class="num" rowspan="2">rate (req/s)</th><th class="num" rowspan="2">p50</th>
<th class="num" rowspan="2">p99</th><th class="num" rowspan="2">429s</th><th class="num" rowspan="2">violations</th>
<th class="num" rowspan="2">errors</th><th class="num" colspan="4">quota utilisation</th></tr>
<tr><th class="num">tier</th><th class="num">key min</th><th class="num">key p50</th><th class="num">key max</th></tr></thead>
<tbody>${plans.map(([name, t]) => tierRow(name, t, false))}${groups.map(([name, t]) => tierRow(name, t, true))}</tbody></table>`;
}

const arrow = (before: string, after: string) => html`${before} → ${after}`;

function isolationRow(plan: string, tier: IsolationTier): SafeHtml {
  const { before: b, after: a } = tier;
  const both = (f: (s: IsolationStretch) => string) => arrow(f(b), f(a));
  return html`<tr data-isolation-tier="${plan}" class="${tier.passed ? '' : 'failing'}"><td><code>${plan}</code></td>
<td class="num">${both((s) => count(s.requests))}</td><td class="num">${both((s) => decimal(s.p50Ms))}</td>
<td class="num">${both((s) => decimal(s.p99Ms))}</td><td class="num">${both((s) => count(s.rateLimited))}</td>
<td class="num">${both((s) => count(s.errors))}</td>
<td class="num"${tier.pValue === null ? html` title="fewer than ${MIN_SAMPLES} requests on a side: latency not judged"` : ''}>${describeP(tier.pValue)}</td>
<td><span class="badge ${tier.passed ? 'pass' : 'fail'}">${tier.passed ? 'pass' : 'fail'}</span>${
    tier.reason ? html`<div class="detail">${tier.reason}</div>` : ''
  }</td></tr>`;
}

function isolationBlock(result: RunResult): SafeHtml | '' {
  const v = result.isolation;
  if (!v) return '';
  const tiers = Object.entries(v.tiers);
  return html`<h3 id="isolation">Noisy neighbour: <code>${v.noisyGroups.join(', ')}</code> from ${decimal(
    v.noisyFromMs / 1000,
  )} s</h3>
<div class="banner ${v.passed ? 'passed' : 'failed'}" data-isolation="${v.passed ? 'passed' : 'failed'}"><strong>isolation ${
    v.passed ? 'held' : 'broken'
  }</strong> <span>${v.detail}</span></div>${
    tiers.length > 0
      ? html`<p class="muted">The compliant tenants of each plan before and after the noisy group started. A tier
fails on any 429 after, on errors beyond chance, or on a slowdown that is significant (one-sided Mann-Whitney
on the response times, p &lt; ${ALPHA}) and large (p50 at least ${SLOWDOWN_RATIO}x and ${SLOWDOWN_MS} ms slower).
Times in ms.</p>
<table data-table="isolation"><thead><tr><th>plan</th><th class="num">requests</th><th class="num">p50</th>
<th class="num">p99</th><th class="num">429s</th><th class="num">errors</th><th class="num">p-value</th>
<th>verdict</th></tr></thead><tbody>${tiers.map(([plan, t]) => isolationRow(plan, t))}</tbody></table>`
      : ''
  }`;
}

/** A tenant mix: its tiers side by side, then the noisy-neighbour verdict. Nothing without one. */
export function tenantsSection(result: RunResult): SafeHtml | '' {
  if (!result.byPlan && !result.byTenantGroup) return '';
  return html`<section id="tenants"><h2>Tenants</h2>
<p class="muted">Per plan, its tenants of unnamed groups; named groups apart, each marked. Keys: tenants that
sent a request of those declared. Latency is response time in ms; errors are 5xx and transport errors;
violations are requests sent inside a 429's pause of their own key. Utilisation: admitted requests over what
the keys were allowed, for the tier and across its keys.</p>
${tiersTable(result)}${isolationBlock(result)}</section>`;
}
