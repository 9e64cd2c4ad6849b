import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { decimal } from '../format.ts';
import { UNVERIFIED_LINE } from '../network.ts';
import { partialReason } from '../partial-reason.ts';
import { refusalStatuses } from '../refusals.ts';
import { isBench, type Verdict, type VerdictPart, verdictOf } from '../verdict.ts';

function part(p: VerdictPart): SafeHtml {
  return html`<li data-part="${p.id}" data-passed="${String(p.passed)}"><span class="badge ${p.passed ? 'pass' : 'fail'}">${p.passed ? 'pass' : 'fail'}</span> ${p.text}${
    !p.passed && p.reasons && p.reasons.length > 0
      ? html`<ul class="samples">${p.reasons.map((why) => html`<li>${why}</li>`)}</ul>`
      : ''
  }</li>`;
}

const WHAT_DECIDES: Record<Verdict['kind'], string> = {
  thresholds: 'the thresholds declared decide',
  compliance: 'no thresholds declared: judged on compliance, which changes no exit code',
  capacity: "each plan's verdict, as in the capacity table below",
  'tenant-capacity': 'the largest number of tenants that held at their quota',
};

/**
 * The first thing a reader (or a CI job's artefact viewer) needs: did the run pass, and on what. The
 * verdict is computed once (verdict.ts) and shown here as the terminal, markdown and JUnit show it.
 */
export function verdictBanner(result: RunResult): SafeHtml {
  const v = verdictOf(result);
  const state = v.passed ? 'passed' : 'failed';
  return html`<div class="banner ${state}" data-verdict="${state}" data-verdict-kind="${v.kind}">
    <strong>${v.passed ? 'PASS' : 'FAIL'} · ${v.headline}</strong> <span class="muted">(${WHAT_DECIDES[v.kind]})</span>
    <ul class="verdict-parts">${[...v.parts, ...v.gates].map(part)}</ul>${
      v.compliance
        ? html`<div class="muted" data-verdict-compliance>compliance, for reading: <ul>${v.compliance.map(part)}</ul></div>`
        : ''
    }
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
  if (!isBench(result) || rateLimited === 0) return '';
  const statuses = refusalStatuses(result.compliance);
  return html`<div class="banner failed" data-rate-limited="true"><strong>${rateLimited} of ${requests} responses were ${statuses === undefined ? '429' : `the limiter's refusals (${statuses})`}</strong>
    (${decimal((rateLimited / Math.max(1, requests)) * 100)}%): the ${result.meta.plan} key's rate limit held this
    benchmark back, so its figures measure the limiter, not the API. Benchmark with an unlimited or enterprise key.</div>`;
}
