import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/api/exit-codes.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { formatProgress } from '../../src/cli/progress.ts';
import { noIterationLine, runExitCode } from '../../src/cli/run-output.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario } from '../../src/scenario/define.ts';
import { executeScenario, type RunTick } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { inSimulatedTime } from '../helpers/simulated.ts';

/**
 * A target that answers every request with a spent budget and no refusal: a mock that always says
 * `RateLimit: remaining=0, reset=10` (draft 7's dictionary), or the seed's X-RateLimit-* at 0. A
 * paced run is held by the target's own fields for most of its time; what it says of that must name
 * those fields as they came, never X-RateLimit-* it never sent nor a 429 that never came, and a run
 * that completed no iteration must not exit 0.
 */

const spec = await loadSpec();
const IETF = 'RateLimit remaining=0, reset=10';
const DURATION_S = 10;

/** Every answer a 200 after 5 ms, with `headers()` (read at the answer: a reset may move with it). */
function spent(headers: () => Record<string, string>): Transport {
  return async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { status: 200, headers: { 'content-type': 'application/json', ...headers() }, text: '[]' };
  };
}

/** Three virtual users for 10 s, each iteration two calls, on a plan of 60 a minute. */
async function run(enforce: boolean, headers: () => Record<string, string>) {
  const scenario = defineScenario({
    name: 'told-budget',
    workload: { executor: 'constant-vus', vus: 3, duration: `${DURATION_S}s` },
    flows: [
      {
        name: 'two',
        run: async (api) => {
          await api.listPets({ limit: 1 });
          await api.listPets({ limit: 2 });
        },
      },
    ],
  });
  const ticks: RunTick[] = [];
  const result = await inSimulatedTime(() =>
    executeScenario({
      scenario,
      workload: resolveWorkload(scenario.workload, 1),
      baseUrl: 'http://told-budget.invalid',
      target: 'http://told-budget.invalid',
      embeddedTarget: false,
      apiKey: 'k',
      operations: spec.operations,
      plan: 'free',
      windows: [{ name: 'minute', limit: 60, seconds: 60 }],
      timeScale: 1,
      enforce,
      spec: 'built in',
      transport: spent(headers),
      onTick: (tick) => ticks.push(tick),
    }),
  );
  expect(resultProblem(result)).toBeUndefined();
  return { result, ticks, summary: formatSummary(result, 'result.json') };
}

/**
 * The summary's words about waits and holds: the quota line from its `waited` (before it, `429s 0`
 * is a count), the lines of holds; not the dialect's or the checks', which name contracts.
 */
const holdLines = (summary: string) =>
  summary
    .split('\n')
    .map((l) => l.replace(/^quota: .*?; (waited )/, '$1'))
    .filter((l) => /^waited|held|paused/.test(l) && !l.startsWith('checks'));

const exitOf = (result: RunResult) =>
  runExitCode(result, { interrupted: false, setupFailed: false, writeFailed: false });

describe('a target whose every answer says its budget is spent, and no 429', () => {
  it(`paced, told in ${IETF}: each hold line names those fields, the run says it was held most of its time, and exits ${EXIT.NO_ITERATIONS}`, async () => {
    const { result, ticks, summary } = await run(true, () => ({ ratelimit: 'remaining=0, reset=10' }));
    expect(result.workload.iterations).toBe(0);
    expect(result.overall.rateLimited).toBe(0);
    const c = result.compliance;
    expect(c.budgetHold?.fields).toBe(IETF);
    expect(c.budgetHold?.ms).toBeGreaterThan(result.meta.durationSeconds * 1000 * 0.5);
    expect(c.budgetWaitMs).toBeGreaterThan(0);
    expect(c.heldPastEnd).toMatchObject({ by: IETF, cause: 'budget' });

    const lines = holdLines(summary);
    expect(lines.join('\n')).not.toMatch(/X-RateLimit|429|refus/);
    expect(lines.find((l) => l.startsWith('waited '))).toContain(
      `s held by the server's told budget (${IETF})`,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^held by the server's told budget until .* UTC \(RateLimit remaining=0, reset=10\): the run ended first$/,
      ),
    );
    const most = lines.filter((l) => l.startsWith("the target's own fields held the key"));
    expect(most).toHaveLength(1);
    expect(most[0]).toContain(`): ${IETF}, its told budget spent until its reset; --enforce off`);

    // Green it is not: no iteration completed, and the one line says why.
    expect(exitOf(result)).toBe(EXIT.NO_ITERATIONS);
    expect(noIterationLine(result)).toMatch(
      /^no iteration completed in \d+\.\d s \(2 requests sent\): the server's told budget held the key \d+\.\d s of it and past its end, until .* \(RateLimit remaining=0, reset=10\)$/,
    );

    // Live, the status line named the same fields while the key was held.
    const held = ticks.find((t) => t.pacing.cause === 'budget');
    expect(held?.pacing.told).toBe(IETF);
    expect(formatProgress(held as RunTick)).toContain(`held by the server's told budget (${IETF})`);
  });

  it('raw, told in the same field: the wait is the told budget, and nothing reads as a refusal', async () => {
    const { result, summary } = await run(false, () => ({ ratelimit: 'remaining=0, reset=10' }));
    expect(result.overall.rateLimited).toBe(0);
    expect(result.workload.iterations).toBeGreaterThan(0);
    const lines = holdLines(summary);
    const waited = lines.find((l) => l.startsWith('waited ')) as string;
    expect(waited).toMatch(
      /^waited \d+(\.\d)? s held by the server's told budget \(RateLimit remaining=0, reset=10\), .*\(raw mode paces no quota\)$/,
    );
    expect(lines.join('\n')).not.toMatch(/X-RateLimit|429|refus/);
    // Raw mode meets the limit on purpose: no advice to turn it off.
    expect(summary).not.toContain("the target's own fields held");
    expect(exitOf(result)).toBe(EXIT.OK);
  });

  it('paced, told in X-RateLimit-*: the lines name those fields with their values', async () => {
    const { result, summary } = await run(true, () => ({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 10),
    }));
    const told = /^X-RateLimit-Remaining: 0, X-RateLimit-Reset: \d{10}$/;
    expect(result.compliance.budgetHold?.fields).toMatch(told);
    expect(result.compliance.heldPastEnd).toMatchObject({ cause: 'budget' });
    expect(result.compliance.heldPastEnd?.by).toMatch(told);
    const lines = holdLines(summary);
    expect(lines.find((l) => l.startsWith("the target's own fields held the key"))).toMatch(
      /: X-RateLimit-Remaining: 0, X-RateLimit-Reset: \d{10}, its told budget spent/,
    );
    expect(lines.join('\n')).not.toMatch(/RateLimit remaining|429|refus/);
    expect(exitOf(result)).toBe(EXIT.NO_ITERATIONS);
  });
});
