import { describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import { pacedPreparationLine } from '../../src/cli/run-announce.ts';
import { formatSummary } from '../../src/cli/summary.ts';
import type { Transport } from '../../src/client/client.ts';
import { mergeResults } from '../../src/report/merge.ts';
import { wallTimeLine } from '../../src/report/wall-time.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario, type Scenario } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { inSimulatedTime } from '../helpers/simulated.ts';

/**
 * Setup and teardown send at the plan's pace: against a real-time target they add seconds to a run
 * beyond its load. Said before the run starts, and the result and the summary give each span.
 */

const spec = await loadSpec();

const answers: Transport = async () => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { status: 200, headers: { 'content-type': 'application/json' }, text: '[]' };
};

/** Four calls in setup, two in teardown, one a second in the load, on a plan of 60 a minute. */
const scenario = defineScenario({
  name: 'prepared',
  workload: { executor: 'constant-vus', vus: 1, duration: '5s' },
  setup: async (api) => {
    for (let i = 0; i < 4; i++) await api.listPets({ limit: 1 });
  },
  teardown: async (api) => {
    for (let i = 0; i < 2; i++) await api.listPets({ limit: 1 });
  },
  flows: [{ name: 'one', run: async (api) => void (await api.listPets({ limit: 1 })) }],
});

async function run(): Promise<RunResult> {
  return inSimulatedTime(() =>
    executeScenario({
      scenario,
      workload: resolveWorkload(scenario.workload, 1),
      baseUrl: 'http://prepared.invalid',
      target: 'http://prepared.invalid',
      embeddedTarget: false,
      apiKey: 'k',
      operations: spec.operations,
      plan: 'free',
      windows: [{ name: 'minute', limit: 60, seconds: 60 }],
      timeScale: 1,
      enforce: true,
      spec: 'built in',
      transport: answers,
    }),
  );
}

const config = (s: Scenario<unknown>, planRate: number) => ({
  scenario: s as Scenario<never>,
  planRate,
  planName: 'free',
  workload: resolveWorkload(s.workload, planRate),
});

describe('wall time around the load', () => {
  it('paced setup and teardown: their spans in the result, valid, and in the summary', async () => {
    const result = await run();
    expect(resultProblem(result)).toBeUndefined();
    const { setupSeconds = 0, teardownSeconds = 0, durationSeconds } = result.meta;
    // Four sends a second apart: three gaps at least; two sends: one gap. Never nothing.
    expect(setupSeconds).toBeGreaterThanOrEqual(3);
    expect(setupSeconds).toBeLessThan(6);
    expect(teardownSeconds).toBeGreaterThanOrEqual(1);
    expect(teardownSeconds).toBeLessThan(4);
    const line = wallTimeLine(result) as string;
    expect(line).toMatch(/^wall time \d+\.\d s: setup \d\.\d s, load \d\.\d s, teardown \d\.\d s$/);
    expect(Number(/wall time (\S+)/.exec(line)?.[1])).toBeCloseTo(
      setupSeconds + durationSeconds + teardownSeconds,
      0,
    );
    expect(formatSummary(result, 'r.json').split('\n')[1]).toBe(line);
  });

  it("setup and teardown short beside the load (the embedded server's tenfold time) still said; none: no line", () => {
    const meta = { setupSeconds: 0.7, teardownSeconds: 0.3, durationSeconds: 10.8 };
    expect(wallTimeLine({ meta } as RunResult)).toBe(
      'wall time 11.8 s: setup 0.7 s, load 10.8 s, teardown 0.3 s',
    );
    const longer = { setupSeconds: 4, teardownSeconds: 1.5, durationSeconds: 60 };
    expect(wallTimeLine({ meta: longer } as RunResult)).toBe(
      'wall time 65.5 s: setup 4.0 s, load 60.0 s, teardown 1.5 s',
    );
    expect(wallTimeLine({ meta: { durationSeconds: 5 } } as RunResult)).toBeUndefined();
    // A scenario with a setup and no teardown: the phases it has.
    expect(wallTimeLine({ meta: { setupSeconds: 0.3, durationSeconds: 5 } } as RunResult)).toBe(
      'wall time 5.3 s: setup 0.3 s, load 5.0 s',
    );
  });

  it('merged parts that ran side by side keep the longest span of each', async () => {
    const result = await run();
    const other = structuredClone(result);
    other.meta.setupSeconds = 9;
    other.meta.teardownSeconds = 0.5;
    const merged = mergeResults([result, other]);
    expect(merged.meta.setupSeconds).toBe(9);
    expect(merged.meta.teardownSeconds).toBe(result.meta.teardownSeconds);
  });
});

describe('said before the run starts', () => {
  it('a real-time plan of one a second: the pace, and that each request adds to the wall time', () => {
    expect(pacedPreparationLine(config(scenario, 1))).toBe(
      "setup and teardown send at plan free's pace, one request every 1.0 s: each of their requests adds about 1.0 s to the run's wall time, beyond the load's 5 s",
    );
    const setupOnly = { ...scenario, teardown: undefined };
    expect(pacedPreparationLine(config(setupOnly, 2))).toMatch(
      /^setup sends at plan free's pace, one request every 500 ms:/,
    );
  });

  it('a quick pace, or nothing to prepare: nothing said', () => {
    expect(pacedPreparationLine(config(scenario, 10))).toBeUndefined();
    expect(
      pacedPreparationLine(config({ ...scenario, setup: undefined, teardown: undefined }, 1)),
    ).toBeUndefined();
  });
});
