import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PLANS, getPlan } from '../../src/api/plans.ts';
import { loadSpec } from '../../src/api/spec.ts';
import { ApiClient } from '../../src/client/client.ts';
import { defineScenario, type Workload } from '../../src/scenario/define.ts';
import { runScenario } from '../../src/scenario/engine.ts';
import { resolveWorkload } from '../../src/scenario/workload.ts';
import { type RunningServer, startServer } from '../../src/server/index.ts';
import { UNLIMITED_PLANS } from '../helpers/fixtures.ts';

let server: RunningServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

/** Runs one listPets flow with this workload against a server that answers after `latencyMs`. */
async function run(
  workload: Workload,
  options: { latencyMs?: number; abortInSetup?: boolean; told?: string[] } = {},
) {
  const told = options.told;
  server = await startServer({
    plans: UNLIMITED_PLANS,
    seedData: 1,
    faults: { latencyMs: options.latencyMs ?? 0 },
  });
  client = new ApiClient({
    baseUrl: server.url,
    apiKey: 'enterprise-demo-key',
    keyLabel: 'enterprise',
    operations: (await loadSpec()).operations,
    windows: getPlan(UNLIMITED_PLANS, 'enterprise').windows,
    sink: { record: () => undefined },
  });
  const controller = new AbortController();
  const scenario = defineScenario({
    name: 'engine-test',
    workload,
    setup: () => {
      told?.push('setup');
      if (options.abortInSetup) controller.abort();
    },
    flows: [{ name: 'list', run: async (api) => void (await api.listPets({ limit: 1 })) }],
  });
  return runScenario({
    scenario,
    workload: resolveWorkload(workload, getPlan(DEFAULT_PLANS, 'free').windows[0]?.limit ?? 1),
    client,
    signal: controller.signal,
    graceMs: 200,
    ...(told
      ? {
          afterSetup: () => told.push('afterSetup'),
          // A fleet's or worker threads' shared start: a wait after setup, before the workload.
          coordination: {
            setup: async (setup: () => Promise<unknown>) => {
              const data = await setup();
              told.push('waiting for the start');
              await new Promise((resolve) => setTimeout(resolve, 50));
              return data;
            },
            beforeTeardown: async () => true,
          },
          onWorkload: (running: boolean) => told.push(running ? 'workload' : 'workload ended'),
        }
      : {}),
  });
}

describe('the workload engine', () => {
  it('lets every iteration of an iteration-bound run finish, past the grace, within the deadline', async () => {
    // Each request takes 600 ms, three times the grace: a grace cut would lose the last ones.
    const out = await run(
      { executor: 'constant-vus', vus: 2, iterations: 4, duration: '20s' },
      { latencyMs: 600 },
    );
    expect(out.workload.iterations).toBe(4);
    expect(out.interrupted).toBe(false);
  });

  it('delivers a ramp from 0 as its integral: 0 to 20/s over 3 s is about 30 iterations', async () => {
    const out = await run({
      executor: 'ramping-arrival-rate',
      startRate: 0,
      stages: [{ target: 20, duration: '3s' }],
    });
    const started = out.workload.iterations + out.workload.droppedIterations;
    expect(started).toBeGreaterThanOrEqual(28);
    expect(started).toBeLessThanOrEqual(31);
  });

  it("tells setup's end before any wait for a shared start, so the recorder counts setup's requests then", async () => {
    const told: string[] = [];
    await run({ executor: 'constant-vus', vus: 1, iterations: 1, duration: '5s' }, { told });
    expect(told).toEqual(['setup', 'afterSetup', 'waiting for the start', 'workload', 'workload ended']);
  });

  it('keeps to an arrival rate of millions a second (80% of a vast plan): ends on time, drops what finds no slot', async () => {
    // 10 million a second, 2 in flight: the schedule's step once fell below what an epoch-sized
    // time can add (0.24 µs), and the loop spun for ever without a turn of the event loop.
    const out = await run({
      executor: 'constant-arrival-rate',
      rate: 10_000_000,
      duration: '1s',
      maxInFlight: 2,
    });
    const started = out.workload.iterations + out.workload.droppedIterations;
    expect(started).toBeGreaterThan(9_900_000);
    expect(started).toBeLessThanOrEqual(10_000_001);
    expect(out.workload.iterations).toBeGreaterThan(0);
    expect(out.endedAt - out.startedAt).toBeLessThan(10_000);
  });

  it('runs no workload when interrupted during setup', async () => {
    const out = await run({ executor: 'constant-vus', vus: 2, duration: '5s' }, { abortInSetup: true });
    expect(out.workload.iterations).toBe(0);
    expect(out.interrupted).toBe(true);
    expect(out.endedAt - out.startedAt).toBeLessThan(1000);
  });
});
