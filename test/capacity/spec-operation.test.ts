import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/api/plans.ts';
import { renderHtmlReport } from '../../src/report/html.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { capacityThroughCli } from '../helpers/capacity-cases.ts';
import { expectBareGcraFound } from '../helpers/capacity-verdicts.ts';
import { cliWorkspace } from '../helpers/integration-cli.ts';
import { type RunningLimiter, startNginxLimitReq } from '../helpers/limiters.ts';

/**
 * `capacity --spec` against a user's own API: real nginx `limit_req` (120r/m, a bare 429) in front
 * of a tiny node:http app that serves only what test/fixtures/openapi/widgets.openapi.yaml documents
 * for its default operation (getWidget: `GET /widgets/{widgetId}?view=...`, the key in an
 * `X-Widget-Key` header). The rate is found as the pet store's is (test/capacity/real-limiters.test.ts,
 * the same plan and tolerance), and every request the app saw was that operation, with the
 * document's example values and the key where its scheme puts it.
 */

const WIDGETS = new URL('../fixtures/openapi/widgets.openapi.yaml', import.meta.url).pathname;
const KEY = 'free-demo-key';
const PLAN: Plan = { name: 'free', windows: [{ name: 'five-seconds', limit: 10, seconds: 5 }] };
/** The widget the document's example names, under the base path the target is given with. */
const EXPECTED_URL = '/api/widgets/7?view=summary';

const workspace = cliWorkspace('spec-operation');
const seen = { good: 0, bad: [] as string[] };
let app: Server;
let limiter: RunningLimiter;

beforeAll(async () => {
  app = createServer((request, response) => {
    const ok = request.method === 'GET' && request.url === EXPECTED_URL;
    const keyed = request.headers['x-widget-key'] === KEY && request.headers.authorization === undefined;
    if (ok && keyed) seen.good++;
    else seen.bad.push(`${request.method} ${request.url} key=${request.headers['x-widget-key']}`);
    response.writeHead(ok ? (keyed ? 200 : 401) : 404, { 'content-type': 'application/json' });
    response.end(ok && keyed ? '{"id":7,"name":"sprocket"}' : '{"code":"nope"}');
  });
  app.listen(0, '127.0.0.1');
  await once(app, 'listening');
  const upstream = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  limiter = await startNginxLimitReq({ upstream, rate: '120r/m' });
});

afterAll(async () => {
  await limiter?.stop();
  app?.close();
});

describe('capacity --spec: nginx limit_req in front of a user operation', () => {
  it("finds a GCRA at 2 requests a second (within 2%), every request the document's getWidget", async () => {
    const started = Date.now();
    const run = await capacityThroughCli(`${limiter.url}/api`, PLAN.windows, workspace.fresh('run'), [
      '--spec',
      WIDGETS,
    ]);
    const { outcome, result, report, why } = run;
    if (!report) throw new Error(`no capacity report: ${why}`);
    expect(resultProblem(result)).toBeUndefined();
    expect(seen.bad, why).toEqual([]);
    // Each admitted request reached the app; nginx answered the refused ones itself.
    expect(seen.good).toBe(result.overall.requests - result.overall.rateLimited);
    expect(report.operation).toEqual({ id: 'getWidget', method: 'GET', path: '/widgets/{widgetId}' });
    expect(result.config.spec).toBe(WIDGETS);
    expect(outcome.stderr).toContain(
      `every probe sends GET /widgets/{widgetId} (getWidget) with widgetId=7, view=summary, from ${WIDGETS}`,
    );
    expect(outcome.stdout).toContain('every request: GET /widgets/{widgetId} (getWidget)');
    expect(renderHtmlReport(result)).toContain(
      'Every request: <code>GET /widgets/{widgetId}</code> (getWidget)',
    );
    expectBareGcraFound(
      { result, report, elapsedMs: Date.now() - started, log: [] },
      { burst: 0, perSecond: 2, plan: PLAN },
    );
  }, 100_000);
});
