import { createHash } from 'node:crypto';
import type { RunResult } from '../result/types.ts';
import { assets } from './assets.ts';
import { chartData, pointsOf } from './chart-data.ts';
import { html, jsonForScript, type SafeHtml, trusted } from './escape.ts';
import { decimal } from './format.ts';
import { capacitySection } from './sections/capacity.ts';
import { latencySection, timelineSection } from './sections/charts.ts';
import { checksSection } from './sections/checks.ts';
import { configSection } from './sections/config.ts';
import { tableOfContents } from './sections/contents.ts';
import { operationLatencySection } from './sections/operation-latency.ts';
import { operationsSection, statusSection } from './sections/operations.ts';
import { probesSection } from './sections/probes.ts';
import { quotaSection } from './sections/quota.ts';
import { summaryCards } from './sections/summary.ts';
import { tenantCapacitySection } from './sections/tenant-capacity.ts';
import { tenantsSection } from './sections/tenants.ts';
import {
  baselineBanner,
  benchRateLimitedBanner,
  partialBanner,
  unverifiedBanner,
  verdictBanner,
} from './sections/verdict.ts';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * Defence in depth behind the escaping: only our two scripts (by hash) may run, and nothing may be
 * fetched, so a string that slipped through could neither execute nor call a host.
 */
function contentSecurityPolicy(scripts: string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    // uPlot positions its cursor and legend with style attributes.
    "style-src 'unsafe-inline'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Top-down as a reader asks: did it pass, what happened overall, how it went over time and against
 * the quota, per operation, the checks; then the detail (percentile curves, configuration). The
 * capacity findings are a capacity run's answer, so they follow the summary cards; the per-tenant
 * tables sit beside the per-operation ones.
 */
function readingOrder(result: RunResult, pointsOfId: (id: string) => number): (SafeHtml | '')[] {
  return [
    verdictSection(result),
    summaryCards(result),
    result.capacity ? capacitySection(result) : '',
    tenantCapacitySection(result),
    probesSection(result),
    timelineSection(pointsOfId),
    operationLatencySection(result, pointsOfId),
    quotaSection(result, pointsOfId),
    operationsSection(result),
    tenantsSection(result),
    statusSection(result),
    checksSection(result),
    latencySection(result, pointsOfId),
    configSection(result),
  ];
}

/** The verdict banners under one heading, so that the contents can link to them. */
function verdictSection(result: RunResult): SafeHtml {
  return html`<section id="verdict"><h2>Verdict</h2>
${verdictBanner(result)}
${baselineBanner(result)}
</section>`;
}

/**
 * The run as one self-contained HTML page: verdict, summary, latency and timeline charts, tables,
 * configuration. It opens offline from a file (CI artefact, e-mail attachment) and requests nothing.
 */
/** A capacity probe drives several plans' keys at once: the header names them, not "a,b plan". */
function planLine(result: RunResult): string {
  const plans = result.capacity?.map((r) => r.plan) ?? [];
  if (plans.length > 1) return `plans ${plans.join(', ')}`;
  return `${plans[0] ?? result.meta.plan} plan`;
}

export function renderHtmlReport(result: RunResult): string {
  const { uplotJs, uplotCss, clientJs, css } = assets();
  const charts = chartData(result);
  const points = new Map(charts.map((c) => [c.id, pointsOf(c)]));
  const pointsOfId = (id: string) => points.get(id) ?? 0;
  const m = result.meta;
  const title = `${m.scenario}: petstore-load report`;
  const sections = readingOrder(result, pointsOfId);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy([uplotJs, clientJs])}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="${m.tool} ${m.toolVersion}">
<title>${title}</title>
<style>${trusted(uplotCss)}</style>
<style>${trusted(css)}</style>
</head>
<body>
<header>
<h1>petstore-load report: <code>${m.scenario}</code></h1>
<p class="subtitle">${m.description ? html`${m.description}<br>` : ''}${planLine(result)} · <span class="mono">${m.target}</span> ·
${m.startedAt} · ${decimal(m.durationSeconds)} s</p>
</header>
${partialBanner(result)}
${unverifiedBanner(result)}
${benchRateLimitedBanner(result)}
${tableOfContents(sections)}
${sections}
<footer>${m.tool} ${m.toolVersion} on Node ${m.nodeVersion} · result schema v${result.schemaVersion} · charts by uPlot (MIT)</footer>
<script type="application/json" id="report-data">${trusted(jsonForScript({ charts }))}</script>
<script>${trusted(uplotJs)}</script>
<script type="module">${trusted(clientJs)}</script>
</body>
</html>
`.value;
}
