import type { RunResult } from '../../result/types.ts';
import { html, type SafeHtml } from '../escape.ts';
import { count, counted, decimal, ms, percent, perSecond } from '../format.ts';
import { describeHeldByLimiter } from '../held-by-limiter.ts';

type Tone = 'good' | 'bad' | 'warn' | '';

function card(id: string, label: string, value: string, note: string, tone: Tone = ''): SafeHtml {
  return html`<div class="card ${tone}" data-card="${id}"><div class="label">${label}</div>
    <div class="value">${value}</div><div class="note">${note}</div></div>`;
}

export function summaryCards(result: RunResult): SafeHtml {
  const { overall, compliance } = result;
  const passes = result.checks.reduce((sum, c) => sum + c.passes, 0);
  const failures = result.checks.reduce((sum, c) => sum + c.failures, 0);
  const evaluated = passes + failures;
  return html`<section id="summary"><h2>Summary</h2><div class="cards">
    ${card('requests', 'requests', count(overall.requests), `${count(compliance.admitted)} admitted, ${counted(overall.retries, 'retry', 'retries')}`)}
    ${card('rate', 'rate', perSecond(overall.rate), `plan allows ${perSecond(compliance.planRate)}`)}
    ${card('p50', 'p50 response time', ms(overall.response.p50), `service ${ms(overall.service.p50)}`)}
    ${card('p99', 'p99 response time', ms(overall.response.p99), `service ${ms(overall.service.p99)}, max ${ms(overall.response.max)}`)}
    ${card('rate-limited', '429 rate', percent(compliance.rateLimitedRate), counted(compliance.rateLimited, 'response', 'responses'), compliance.rateLimited > 0 ? 'warn' : 'good')}
    ${card(
      'checks',
      'check pass rate',
      evaluated === 0 ? '–' : percent(passes / evaluated),
      evaluated === 0
        ? 'no check evaluated'
        : `${counted(failures, 'failure', 'failures')} of ${count(evaluated)}`,
      evaluated === 0 ? '' : failures > 0 ? 'bad' : 'good',
    )}
    ${card('quota', 'quota utilisation', percent(compliance.quotaUtilization), `of ${decimal(compliance.planRate)} req/s`)}
    ${card('violations', 'violations', count(compliance.violations), 'requests sent inside a Retry-After', compliance.violations > 0 ? 'bad' : 'good')}
  </div>${compliance.heldByLimiter ? html`<p class="muted" data-held-by-limiter>${describeHeldByLimiter(compliance.heldByLimiter)}</p>` : ''}</section>`;
}
