import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/api/exit-codes.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { noIterationLine, nothingSentLine, runExitCode } from '../../src/cli/run-output.ts';
import { tell } from '../../src/cli/run-verdict.ts';
import type { Transport } from '../../src/client/client.ts';
import type { RunConfig } from '../../src/config/run.ts';
import { verdictOf } from '../../src/report/verdict.ts';
import type { RunResult } from '../../src/result/types.ts';
import { resultProblem } from '../../src/result/validate.ts';
import { defineScenario, type Flow } from '../../src/scenario/define.ts';
import { executeScenario } from '../../src/scenario/execute.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { inSimulatedTime } from '../helpers/simulated.ts';

/**
 * A run that could not do its job never exits 0: a workload whose iterations complete without one
 * request (flows that call nothing), or whose run is shorter than one iteration, ends with exit 5
 * and one line saying why, on stderr, quiet or not; one that sent its requests exits 0.
 */

const spec = await loadSpec();

afterEach(() => vi.restoreAllMocks());

/** Every answer a 200 after 5 ms. */
const answers: Transport = async () => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { status: 200, headers: { 'content-type': 'application/json' }, text: '[]' };
};

async function run(
  flow: Flow<unknown>['run'],
  o: { duration?: string; setup?: boolean; limit?: number } = {},
): Promise<RunResult> {
  const scenario = defineScenario({
    name: 'nothing-sent',
    workload: { executor: 'constant-vus', vus: 2, duration: o.duration ?? '3s' },
    ...(o.setup ? { setup: async (api) => void (await api.listPets({ limit: 1 })) } : {}),
    flows: [{ name: 'the-flow', run: flow }],
  });
  const result = await inSimulatedTime(() =>
    executeScenario({
      scenario,
      workload: resolveWorkload(scenario.workload, 1),
      baseUrl: 'http://nothing-sent.invalid',
      target: 'http://nothing-sent.invalid',
      embeddedTarget: false,
      apiKey: 'k',
      operations: spec.operations,
      plan: 'free',
      windows: [{ name: 'minute', limit: o.limit ?? 600, seconds: 60 }],
      timeScale: 1,
      enforce: true,
      spec: 'built in',
      transport: answers,
    }),
  );
  expect(resultProblem(result)).toBeUndefined();
  return result;
}

const exitOf = (result: RunResult) =>
  runExitCode(result, { interrupted: false, setupFailed: false, writeFailed: false });

const think = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What `tell` says on stderr for a quiet run. */
function toldOnStderr(result: RunResult, exitCode: number): string[] {
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  vi.spyOn(console, 'log').mockImplementation(() => undefined);
  const config = { quiet: true } as RunConfig;
  tell(result, {
    config,
    abortedBy: undefined,
    setupFailure: undefined,
    exitCode,
    path: 'r.json',
    lines: [],
  });
  return err.mock.calls.map((c) => String(c[0]));
}

describe('a run that sent nothing', () => {
  it('flows that call nothing: iterations complete, no request, exit 5 and one line', async () => {
    const result = await run(() => think(100));
    expect(result.workload.iterations).toBeGreaterThan(0);
    expect(result.overall.requests).toBe(0);
    expect(noIterationLine(result)).toBeUndefined();
    expect(exitOf(result)).toBe(EXIT.NO_ITERATIONS);
    expect(nothingSentLine(result)).toMatch(
      /^the workload sent no request in 3\.\d s: its \d+ iterations completed without one, so the run measured nothing of the target$/,
    );
    expect(toldOnStderr(result, EXIT.NO_ITERATIONS)).toEqual([`petstore-load: ${nothingSentLine(result)}\n`]);
    // Every output's verdict agrees with the exit: no green on a run that measured nothing.
    expect(verdictOf(result)).toMatchObject({
      passed: false,
      headline: expect.stringContaining('(requests)'),
    });
  });

  it("setup's requests are not the workload's: still exit 5, the line counts them apart", async () => {
    const result = await run(() => think(100), { setup: true });
    expect(result.overall.requests).toBe(1);
    expect(exitOf(result)).toBe(EXIT.NO_ITERATIONS);
    expect(nothingSentLine(result)).toMatch(
      /^the workload sent no request in 3\.\d s \(setup and teardown sent 1\): /,
    );
  });

  it('paced, every iteration held past a run shorter than one: none completed, exit 5 and the line says so', async () => {
    // Ten calls an iteration on a plan of five a minute: the pacer holds the second call past the run.
    const result = await run(
      async (api) => {
        for (let i = 0; i < 10; i++) await api.listPets({ limit: 1 });
      },
      { duration: '2s', limit: 5 },
    );
    expect(result.workload.iterations).toBe(0);
    expect(exitOf(result)).toBe(EXIT.NO_ITERATIONS);
    expect(nothingSentLine(result)).toBeUndefined();
    expect(toldOnStderr(result, EXIT.NO_ITERATIONS)).toEqual([
      expect.stringMatching(
        /^petstore-load: no iteration completed in \d+\.\d s \(\d+ requests? sent\): held until .+ UTC \(the plan's quota\)\n$/,
      ),
    ]);
  });

  it('a workload that sent its requests exits 0 and says nothing of it', async () => {
    const result = await run(async (api) => {
      await api.listPets({ limit: 1 });
      await think(100);
    });
    expect(result.overall.requests).toBeGreaterThan(0);
    expect(nothingSentLine(result)).toBeUndefined();
    expect(exitOf(result)).toBe(EXIT.OK);
    expect(verdictOf(result).parts.find((p) => p.id === 'requests' || p.id === 'iterations')).toBeUndefined();
    expect(toldOnStderr(result, EXIT.OK)).toEqual([]);
  });
});
