import type { RunResult, ThresholdResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { decimal } from '../format.ts';
import { UNVERIFIED_LINE } from '../network.ts';
import { partialReason } from '../partial-reason.ts';
import { refusalStatuses } from '../refusals.ts';

const actual = (t: ThresholdResult) =>
  t.actual === null ? 'nothing measured' : `measured ${decimal(t.actual)}`;

function item(t: ThresholdResult): SafeHtml {
  return html`<li><code>${t.expression}</code> <span class="muted">(${t.source})</span>: ${actual(t)}${
    t.detail ? html`, ${t.detail}` : ''
  }${t.aborted ? html` <strong>(ended the run early)</strong>` : ''}</li>`;
}

/** The first thing a reader (or a CI job's artefact viewer) needs: did the run meet its thresholds. */
export function verdictBanner(result: RunResult): SafeHtml {
  const thresholds = result.thresholds ?? [];
  const failed = thresholds.filter((t) => !t.passed);
  const passed = thresholds.filter((t) => t.passed);
  if (thresholds.length === 0) {
    // Probes and a baseline are verdicts of their own, shown beside this one.
    const other = result.probes !== undefined || result.baseline !== undefined;
    return html`<div class="banner neutral" data-verdict="none"><strong>no thresholds declared</strong>
      <span>${other ? '.' : ': nothing to pass or fail; the figures below are for reading.'}</span></div>`;
  }
  if (failed.length === 0) {
    return html`<div class="banner passed" data-verdict="passed"><strong>thresholds passed</strong>
      <span>(${thresholds.length} of ${thresholds.length})</span><ul>${passed.map(item)}</ul></div>`;
  }
  return html`<div class="banner failed" data-verdict="failed">
    <strong>${failed.length} of ${thresholds.length} thresholds failed</strong><ul>${failed.map(item)}</ul>
    ${passed.length > 0 ? html`<div class="muted">passed: ${passed.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t.expression}</code>`)}</div>` : ''}
  </div>`;
}

/** `run --baseline`: regressions fail the run as thresholds do, so they stand beside the verdict. */
export function baselineBanner(result: RunResult): SafeHtml | '' {
  const verdict = result.baseline;
  if (!verdict) return '';
  const { file, regressions } = verdict;
  if (regressions.length === 0) {
    return html`<div class="banner passed" data-baseline="passed"><strong>no regression</strong>
      <span>against <code>${file}</code></span></div>`;
  }
  return html`<div class="banner failed" data-baseline="failed">
    <strong>${regressions.length} regression${regressions.length === 1 ? '' : 's'}</strong> against <code>${file}</code>
    <ul>${regressions.map((r) => html`<li><code>${r.operation}</code> ${r.metric}: ${decimal(r.baseline)} → ${decimal(r.current)}</li>`)}</ul>
  </div>`;
}

/** A run that verified no certificate says so before any of its figures. */
export function unverifiedBanner(result: RunResult): SafeHtml | '' {
  if (!result.config.network?.insecure) return '';
  return html`<div class="banner partial" data-insecure="true"><strong>TLS unverified</strong>: ${UNVERIFIED_LINE.replace(/^TLS unverified \(--insecure\): /, '')}.</div>`;
}

/** A partial run's figures cover less than was planned: say so before any of them. */
export function partialBanner(result: RunResult): SafeHtml | '' {
  const { partial, interruptedBy, durationSeconds, checkpoint } = result.meta;
  if (!partial && !interruptedBy) return '';
  if (checkpoint)
    return html`<div class="banner partial" data-partial="true" data-checkpoint="true"><strong>partial run</strong>: ${partialReason(result.meta)}. The figures cover the ${decimal(durationSeconds)} s measured by then, not the whole plan.</div>`;
  return html`<div class="banner partial" data-partial="true"><strong>partial run</strong>${
    interruptedBy ? html`: interrupted by <code>${interruptedBy}</code>` : ''
  }. The figures cover the ${decimal(durationSeconds)} s that ran, not the whole plan.</div>`;
}

/**
 * A throughput benchmark (`bench`) that met 429s measured the key's rate limiter, not the API: the
 * reader must know before reading a single figure. A scenario run meets 429s by design; not said here.
 */
export function benchRateLimitedBanner(result: RunResult): SafeHtml | '' {
  const { rateLimited, requests } = result.overall;
  if (!result.meta.scenario.split(', ').includes('bench') || rateLimited === 0) return '';
  const statuses = refusalStatuses(result.compliance);
  return html`<div class="banner failed" data-rate-limited="true"><strong>${rateLimited} of ${requests} responses were ${statuses === undefined ? '429' : `the limiter's refusals (${statuses})`}</strong>
    (${decimal((rateLimited / Math.max(1, requests)) * 100)}%): the ${result.meta.plan} key's rate limit held this
    benchmark back, so its figures measure the limiter, not the API. Benchmark with an unlimited or enterprise key.</div>`;
}
