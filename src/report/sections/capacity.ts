import { isSpacingLimiter } from '../../api/limiter-kinds.ts';
import type { BanReport, CapacityReport } from '../../result/capacity-types.ts';
import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';

const show = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(v));

function dayCells(r: CapacityReport): SafeHtml {
  const d = r.daily;
  if (!d) return html`<td class="num">–</td><td class="num">–</td>`;
  return html`<td class="num" title="${d.notes.join('; ')}">${d.acceptedPerDay ?? `${d.acceptedByProbe}+`}</td>
<td class="num">${d.first429At ?? 'none'} <span class="muted">(want ${d.expected429At})</span></td>`;
}

/** Where the first 429 came: a window's against its limit + 1, a token bucket's or GCRA's as its burst. */
function first429(r: CapacityReport): SafeHtml {
  if (r.exhaust.first429At === null) return html`none in ${r.exhaust.sent}`;
  const type = r.limiter.type;
  const spacing = type !== 'unknown' && isSpacingLimiter(type);
  return html`${r.exhaust.first429At} <span class="muted">(${spacing ? 'after its burst' : `want ${r.exhaust.expected429At}`})</span>`;
}

/** Beside the model: a concurrency limit and a queue, when the probe saw them. */
export function limiterExtras(r: CapacityReport): string[] {
  const l = r.limiter;
  const extras: string[] = [];
  if (l.maxInFlight !== null && l.maxInFlight !== undefined) extras.push(`≤${l.maxInFlight} in flight`);
  if (l.queue) extras.push(`queue ${l.queue}`);
  // A limiter that delays rather than refuses is named by what it does, beside whatever type it has.
  if (l.slowDown)
    extras.push(`delays +${l.slowDown.delayPerRequestMs} ms/request after ${l.slowDown.threshold}`);
  // Every longer window measured beside the one the phases measured (the table shows that one).
  for (const w of (l.windows ?? []).slice(1))
    if (w.measured) extras.push(`and ${w.limit} per ${w.seconds} s`);
  // A block is a finding of its own, what the seed's temporary ban looks like in the wild.
  if (l.block)
    extras.push(
      `blocks ${l.block.seconds} s at ${l.block.afterExcessOf === 1 ? 'its first excess' : `an excess of ${l.block.afterExcessOf}`}`,
    );
  return extras;
}

/** The limiter as measured; a result written before these fields existed shows dashes. */
function limiterCells(r: CapacityReport): SafeHtml {
  const l = r.limiter;
  const search = l.rateSearch?.intervalMs;
  const rateTitle = search
    ? `one request per ${search.low} to ${search.high} ms (${l.rateSearch?.probes} requests, ${l.rateSearch?.refused} refused)`
    : l.window
      ? `${l.window.limit} per ${l.window.seconds} s`
      : '';
  const extras = limiterExtras(r);
  return html`<td title="${l.evidence.join('; ')}">${l.type}${extras.length > 0 ? html` <span class="muted">(${extras.join(', ')})</span>` : ''}</td>
<td class="num" title="${rateTitle}">${show(l.sustainedPerSecond)}</td><td class="num">${show(l.burst)}</td>
<td title="${l.resetSemantics ? `reset: ${l.resetSemantics}` : ''}">${l.headerDialect ?? '–'}</td>`;
}

function row(r: CapacityReport, daily: boolean): SafeHtml {
  const pass = r.verdict === 'pass';
  return html`<tr data-plan="${r.plan}" class="${pass ? '' : 'failing'}"><td><code>${r.plan}</code></td>
<td class="num">${show(r.promisedPerMinute)}</td><td class="num">${show(r.promisedPerDay)}</td>
<td class="num">${r.window.limit} / ${r.window.seconds} s (×${r.timeScale})</td>
<td class="num">${r.rate.acceptedPerWindow.join(', ') || '–'}</td>
<td class="num">${first429(r)}</td>
<td class="num">${show(r.recovery.resetErrorMs)}</td><td class="num">${show(r.recovery.retryAfterAccuracyMs)}</td>
${daily ? dayCells(r) : ''}${limiterCells(r)}
<td><span class="badge ${pass ? 'pass' : 'fail'}">${r.verdict}</span>${
    r.reasons.length > 0
      ? html`<ul class="samples">${r.reasons.map((why) => html`<li>${why}</li>`)}</ul>`
      : ''
  }</td></tr>`;
}

function banBlock(b: BanReport): SafeHtml {
  const pass = b.verdict === 'pass';
  const ban = b.ban;
  return html`<h3 id="ban-probe">Temporary ban (<code>${b.plan}</code> key, ${b.requests} requests)</h3>
<table class="capacity ban"><thead><tr><th>first 429 at</th><th>banned at request inside Retry-After</th><th>ban answer</th>
<th>announced s</th><th>end error ms</th><th>verdict</th></tr></thead><tbody><tr class="${pass ? '' : 'failing'}">
<td class="num">${show(b.exhaust.first429At)}</td><td class="num">${b.banned ? show(b.strikes.toBan) : `no ban in ${b.strikes.sent}`}</td>
<td>${ban ? `HTTP ${ban.status}${ban.code ? ` ${ban.code}` : ''}` : '–'}</td>
<td class="num">${show(ban?.announcedSeconds)}</td><td class="num">${ban?.waited ? show(ban.endErrorMs) : 'not waited'}</td>
<td><span class="badge ${pass ? 'pass' : 'fail'}">${b.verdict}</span>${
    b.reasons.length + b.notes.length > 0
      ? html`<ul class="samples">${[...b.reasons, ...b.notes].map((why) => html`<li>${why}</li>`)}</ul>`
      : ''
  }</td></tr></tbody></table>`;
}

/** The operations the probes sent, each once (a result written before names none). */
function probedOperations(reports: readonly CapacityReport[]): SafeHtml | '' {
  const named = new Map<string, NonNullable<CapacityReport['operation']>>();
  for (const r of reports) if (r.operation) named.set(`${r.operation.method} ${r.operation.id}`, r.operation);
  if (named.size === 0) return '';
  return html`<p class="probed-operation">Every request: ${[...named.values()].map(
    (op, i) => html`${i > 0 ? ', ' : ''}<code>${op.method} ${op.path}</code> (${op.id})`,
  )}</p>`;
}

/** The capacity table: what each plan's key got against what the plan promises. */
export function capacitySection(result: RunResult): SafeHtml {
  const reports = result.capacity ?? [];
  const daily = reports.some((r) => r.daily);
  return html`<section id="capacity"><h2>Capacity</h2>
<p class="muted">Per plan: the plan rate for whole windows, one window exhausted until the first 429, and the
quota's return probed only after Retry-After. Errors in ms: positive means the quota came back after the
announced time (headers carry whole seconds, so up to −1000 ms is expected), each reset read in the dialect
the target spoke. The model is the limiter as measured: its sustained rate, and its burst (a window's limit,
a token bucket's size, a GCRA's extra requests at once), and beside the model the requests it admits in
flight at once (a concurrency limit) and those it holds and releases at its rate rather than refuse (a queue).</p>
${probedOperations(reports)}
<table class="capacity"><thead><tr><th>plan</th><th>per minute</th><th>per day</th><th>window (scaled)</th>
<th>accepted per window</th><th>first 429 at</th><th>reset error ms</th><th>Retry-After error ms</th>${
    daily ? html`<th>accepted per day</th><th>day's first 429 at</th>` : ''
  }<th>model</th><th>sustained per s</th><th>burst</th><th>header dialect</th>
<th>verdict</th></tr></thead><tbody>${reports.map((r) => row(r, daily))}</tbody></table>${
    result.banProbe ? banBlock(result.banProbe) : ''
  }</section>`;
}
