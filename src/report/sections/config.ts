import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, decimal, duration } from '../format.ts';
import { describeNetwork } from '../network.ts';
import { partialReason } from '../partial-reason.ts';
import { countCell } from './cells.ts';

type Entry = [label: string, value: SafeHtml | string | number | boolean | undefined];

/** Workload settings are open-ended (each executor has its own): nested values print as JSON. */
function plain(value: unknown): string {
  if (value === undefined) return '–';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return JSON.stringify(value) ?? String(value);
}

function list(entries: Entry[]): SafeHtml {
  return html`<dl class="config">${entries.map(
    ([label, value]) =>
      html`<dt>${label}</dt><dd>${value === undefined ? '–' : typeof value === 'object' ? value : plain(value)}</dd>`,
  )}</dl>`;
}

function runList(result: RunResult): SafeHtml {
  const m = result.meta;
  return list([
    ['scenario', html`<code>${m.scenario}</code>`],
    ['description', m.description],
    [
      'target',
      html`<span class="mono">${m.target}</span>${m.embeddedTarget ? ' (embedded reference server)' : ''}`,
    ],
    ['plan', m.plan],
    ['started', m.startedAt],
    ['ended', m.endedAt],
    ['duration', `${decimal(m.durationSeconds)} s`],
    ['partial', m.partial ? `yes, ${partialReason(m)}` : 'no'],
    ['tool', `${m.tool} ${m.toolVersion}`],
    ['node', m.nodeVersion],
  ]);
}

function configList(result: RunResult): SafeHtml {
  const c = result.config;
  return list([
    ...Object.entries(c.workload).map(([key, value]): Entry => [`workload ${key}`, plain(value)]),
    ['enforce (pacing)', c.enforce ? 'on' : 'off (raw mode)'],
    ['allow ban risk', c.allowBanRisk ? 'yes' : 'no'],
    ['time scale', c.timeScale],
    [
      'windows',
      html`${c.windows.map((w, i) => html`${i > 0 ? html`<br>` : ''}${w.name}: ${count(w.limit)} per ${decimal(w.seconds)} s`)}`,
    ],
    ['timeout', `${count(c.timeoutMs)} ms`],
    ['max attempts', c.maxAttempts],
    ['spec', c.spec],
    // Only when some were: a body's format no validator knows passed unchecked.
    ...(c.formatsNotChecked ? [['formats not checked', c.formatsNotChecked.join(', ')] as Entry] : []),
    ['seed', c.seed],
    ['rate-limit contract', c.contract ?? 'seed'],
    // Only when given: without the flag nothing but 429 (and a 503 or 403 with a sign) is a refusal.
    ...(c.refusalStatuses?.length
      ? [
          [
            'refusal statuses',
            html`429, ${c.refusalStatuses.join(', ')} <span class="muted">(<code>--refusal-status</code>)</span>`,
          ] as Entry,
        ]
      : []),
    ...describeNetwork(result).map((line): Entry => ['network', line]),
  ]);
}

function workloadSummary(result: RunResult): SafeHtml {
  const w = result.workload;
  const c = result.compliance;
  const flows = Object.entries(w.flows);
  return html`${list([
    ['iterations', count(w.iterations)],
    ['dropped iterations', count(w.droppedIterations)],
    ['failed iterations', count(w.failedIterations)],
    ['retries', count(c.retries)],
    // Each wait named by what held it, as the summary does: the server's told budget is its own
    // hold, not the plan's pacing; raw mode paces no quota, and what else it waited is its ban guard.
    [
      result.config.enforce ? 'pacing wait' : 'ban guard wait (raw mode)',
      duration(c.pacingWaitMs - Math.min(c.budgetWaitMs ?? 0, c.pacingWaitMs)),
    ],
    ...(c.budgetWaitMs
      ? [
          [
            "held by the server's told budget",
            html`${duration(c.budgetWaitMs)}${c.budgetHold ? html` <span class="muted">(<code>${c.budgetHold.fields}</code>)</span>` : ''}`,
          ] as Entry,
        ]
      : []),
    ['backoff wait', duration(c.backoffWaitMs)],
  ])}${
    flows.length === 0
      ? html`<p class="no-data">no data: no flow ran</p>`
      : html`<table data-table="flows"><thead><tr><th>flow</th><th class="num">iterations</th>
        <th class="num">failures</th><th>first error</th></tr></thead><tbody>${flows.map(
          ([
            name,
            f,
          ]) => html`<tr><td><code>${name}</code></td>${countCell(f.iterations)}${countCell(f.failures, true)}
            <td class="detail">${f.firstError ?? ''}</td></tr>`,
        )}</tbody></table>`
  }`;
}

export function configSection(result: RunResult): SafeHtml {
  return html`<section id="configuration"><h2>Plan and configuration</h2><div class="columns">
    <div><h3>Run</h3>${runList(result)}</div>
    <div><h3>Configuration</h3>${configList(result)}</div>
    <div><h3>Workload</h3>${workloadSummary(result)}</div>
  </div></section>`;
}
