import type { TenantCapacity, TenantStep } from '../../result/capacity-types.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, decimal, percent } from '../format.ts';
import { TENANT_RAMP_CHART } from '../tenant-ramp-chart.ts';

function banner(c: TenantCapacity): SafeHtml {
  const kind =
    c.held === null
      ? 'failed'
      : c.boundBy === 'generator' || c.boundBy === 'interrupted'
        ? 'neutral'
        : 'passed';
  const bound = {
    generator: 'bound: this machine (the generator)',
    max: "bound: the ramp's maximum",
    target: 'bound: the target',
    interrupted: 'interrupted: no bound found',
  }[c.boundBy];
  return html`<div class="banner ${kind}" data-tenant-capacity="${c.held ?? 0}" data-bound="${c.boundBy}">
<strong>${c.held === null ? 'no step held' : `${count(c.held)} tenants held`}</strong> <span class="muted">(${bound})</span><br>${c.sentence}</div>`;
}

const perPlan = (s: TenantStep) =>
  Object.entries(s.perPlan)
    .map(([plan, n]) => `${plan} ${count(n)}`)
    .join(', ');

function row(s: TenantStep, mix: boolean): SafeHtml {
  return html`<tr class="${s.held ? '' : 'failing'}" data-tenants="${s.tenants}"><td class="num">${count(s.tenants)}</td>
${mix ? html`<td>${perPlan(s)}</td>` : ''}<td class="num">${decimal(s.rate)}</td><td class="num">${decimal(s.offeredRate)}</td>
<td class="num">${decimal(s.p50Ms)}</td><td class="num">${decimal(s.p99Ms)}</td><td class="num">${decimal(s.serviceP99Ms)}</td>
<td class="num">${count(s.errors)}</td><td class="num">${count(s.rateLimited)}</td><td class="num">${count(s.limiterCheckFailures)}</td>
<td class="num">${count(s.droppedIterations)}</td><td class="num">${decimal(s.loopDelayP99Ms)}</td><td class="num">${percent(s.generatorCpu)}</td>
<td><span class="badge ${s.held ? 'pass' : 'fail'}">${s.held ? 'held' : `broke: ${s.cause}`}</span>${
    s.reasons.length > 0
      ? html`<ul class="samples">${s.reasons.map((why) => html`<li>${why}</li>`)}</ul>`
      : ''
  }</td></tr>`;
}

/**
 * `capacity --tenants`: the number, the curve (drawn by the page from the report's data) and every
 * step. The run-wide sections below are the largest step that held.
 */
export function tenantCapacitySection(result: RunResult): SafeHtml | '' {
  const c = result.tenantCapacity;
  if (!c) return '';
  const mix = Object.keys(c.mix).length > 1;
  const sorted = [...c.steps].sort((a, b) => a.tenants - b.tenants);
  const chart =
    sorted.length === 0
      ? html`<div class="chart" data-chart="${TENANT_RAMP_CHART}" data-points="0"><p class="no-data">no data: no step ran</p></div>`
      : html`<div class="chart" data-chart="${TENANT_RAMP_CHART}"><noscript><p class="no-data">charts need JavaScript</p></noscript></div>`;
  const w = c.warmup;
  return html`<section id="tenant-capacity"><h2>Tenant capacity</h2>
${banner(c)}
<p class="muted">Each step drives its tenants at their plan's full quota (time scale ${c.timeScale}) for
${decimal(c.stepMs / 1000)} s, ${decimal(c.restMs / 1000)} s apart${w ? `, after an unmeasured warm-up of ${w.tenants} tenants` : ''}: doubling
from ${count(c.start)}, then bisecting between the last step that held and the first that broke (at most
${count(c.maxTenants)}). A step breaks on a failed threshold (${c.thresholds.join(', ') || 'none'}), any 5xx or
transport error, a 429 to a tenant paced within its quota or a failed rate-limit header check (the limiter
misbehaves); when the generator dropped iterations or its timers ran late, this machine is the bound, not
the target. Latency is response time, from when each request was due. The sections below show the
largest step that held.</p>
<div class="chart-card"><h3>Latency and rate by tenants</h3>${chart}</div>
<table class="capacity tenants"><thead><tr><th>tenants</th>${mix ? html`<th>per plan</th>` : ''}<th>req/s</th><th>quota req/s</th>
<th>p50 ms</th><th>p99 ms</th><th>service p99 ms</th><th>errors</th><th>429s</th><th>limiter check failures</th>
<th>dropped</th><th>generator lag ms</th><th>generator CPU</th><th>step</th></tr></thead>
<tbody>${sorted.map((s) => row(s, mix))}</tbody></table></section>`;
}
