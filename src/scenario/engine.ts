import { seededRandom } from '../api/random.ts';
import type { ApiClient, ApiResponse, CallInput } from '../client/client.ts';
import { now, sleepUntil } from '../client/clock.ts';
import { AbortedError } from '../client/gate.ts';
import { type CallFn, PetstoreApi, petstoreApi } from '../client/petstore-api.ts';
import type { WorkloadSummary } from '../result/types.ts';
import type { Flow, FlowContext, Scenario } from './define.ts';
import type { ResolvedWorkload } from './workload.ts';

export interface EngineInput<D> {
  scenario: Scenario<D>;
  workload: ResolvedWorkload;
  client: ApiClient;
  /** Aborted on SIGINT/SIGTERM: no new iteration starts, in-flight ones get the grace. */
  signal: AbortSignal;
  seed?: number;
  /** How long in-flight iterations may finish after the end (default 2 s). */
  graceMs?: number;
  /**
   * Told when the workload (not setup or teardown) starts and stops, for quota utilisation; gets
   * the workload's counters, live, so that progress and thresholds can read them during the run.
   */
  onWorkload?(running: boolean, summary: WorkloadSummary): void;
  /** Worker threads of one run: one runs setup and teardown for all, and all start together. */
  coordination?: Coordination<D>;
}

/** How the workers of one run share its setup and teardown. */
export interface Coordination<D> {
  /** Runs `setup` (the first worker) or receives its data; resolves when every worker may start. */
  setup(run: () => Promise<D>): Promise<D>;
  /** After the workload: resolves when every worker's has ended; true for the one that tears down. */
  beforeTeardown(): Promise<boolean>;
}

export interface EngineOutput {
  workload: WorkloadSummary;
  interrupted: boolean;
  /** Epoch ms when traffic started (after setup) and stopped (before teardown). */
  startedAt: number;
  endedAt: number;
}

export class SetupError extends Error {
  override readonly name = 'SetupError';
}

// IterationApi routes every call itself; the base class's caller is never used.
const unusedCaller: CallFn = () => Promise.reject(new Error('unreachable'));

/** One iteration's API: its first call carries the iteration's due time (open model). */
class IterationApi extends PetstoreApi {
  constructor(
    private readonly client: ApiClient,
    private due: number | undefined,
  ) {
    super(unusedCaller);
  }
  override call<T = unknown>(operationId: string, input: CallInput = {}): Promise<ApiResponse<T>> {
    const due = this.due;
    if (due === undefined) return this.client.call<T>(operationId, input);
    this.due = undefined;
    return this.client.call<T>(operationId, { ...input, scheduledAt: due });
  }
}

class IterationContext<D> implements FlowContext<D> {
  constructor(
    readonly data: D,
    readonly vu: number,
    readonly iteration: number,
    readonly random: () => number,
  ) {}
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }
}

function flowPicker<D>(flows: Flow<D>[], random: () => number): () => Flow<D> {
  const total = flows.reduce((sum, f) => sum + (f.weight ?? 1), 0);
  return () => {
    let x = random() * total;
    for (const f of flows) {
      x -= f.weight ?? 1;
      if (x < 0) return f;
    }
    return flows[flows.length - 1] as Flow<D>;
  };
}

/**
 * Runs setup, the workload and teardown of a scenario through one client. The open model schedules
 * iteration starts by the clock and records each call's due time, so a late generator or a slow
 * server shows in response time; the closed model runs N virtual users back to back.
 */
export async function runScenario<D>(input: EngineInput<D>): Promise<EngineOutput> {
  const { scenario, workload, client, signal } = input;
  const random = seededRandom(input.seed);
  const pickFlow = flowPicker(scenario.flows, random);
  const summary: WorkloadSummary = {
    iterations: 0,
    droppedIterations: 0,
    failedIterations: 0,
    flows: Object.fromEntries(scenario.flows.map((f) => [f.name, { iterations: 0, failures: 0 }])),
  };
  const plainApi = petstoreApi(client.call.bind(client) as CallFn);

  let data: D;
  const setup = async () => {
    try {
      return (await scenario.setup?.(plainApi)) as D;
    } catch (error) {
      throw new SetupError(`setup failed: ${(error as Error).message}`);
    }
  };
  data = input.coordination ? await input.coordination.setup(setup) : await setup();

  input.onWorkload?.(true, summary);
  const startedAt = now();
  const deadline = startedAt + workload.durationMs;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  signal.addEventListener('abort', onSignal, { once: true });
  // Interrupted during setup: no workload at all (the listener would never fire for a past abort).
  if (signal.aborted) stop.abort();
  const timer = setTimeout(onSignal, workload.durationMs);
  let started = 0;
  const inFlight = new Set<Promise<void>>();
  const more = () =>
    !stop.signal.aborted && (workload.iterations === undefined || started < workload.iterations);

  const iterate = async (vu: number, scheduledAt: number | undefined): Promise<void> => {
    const iteration = started++;
    const flow = pickFlow();
    const ctx = new IterationContext(data, vu, iteration, random);
    const stats = summary.flows[flow.name] as WorkloadSummary['flows'][string];
    try {
      await flow.run(new IterationApi(client, scheduledAt), ctx);
      stats.iterations++;
      summary.iterations++;
    } catch (error) {
      if (error instanceof AbortedError) return;
      stats.iterations++;
      stats.failures++;
      summary.iterations++;
      summary.failedIterations++;
      stats.firstError ??= String((error as Error).message ?? error).slice(0, 300);
    }
  };

  const track = (p: Promise<void>) => {
    inFlight.add(p);
    p.finally(() => inFlight.delete(p));
  };

  if (workload.kind === 'open') {
    // An iteration is due where the integral of the rate crosses the next whole number. Steps of at
    // most 50 ms (midpoint rule) follow a ramp, even one starting from 0, as well as a constant rate.
    let t = startedAt;
    let credit = 0;
    while (more() && t - startedAt < workload.durationMs) {
      if (credit >= 1 - 1e-9) {
        // A timer per iteration would cost more than the request at thousands a second: iterations
        // due within a millisecond start together, with their own due times kept.
        if (t - now() > 1) await sleepUntil(t, stop.signal);
        if (!more()) break;
        credit -= 1;
        // Behind schedule, iterations start at once with their due time kept: the lateness is measured.
        if (inFlight.size >= workload.maxInFlight) summary.droppedIterations++;
        else track(iterate(inFlight.size, t));
        continue;
      }
      const rate = workload.rateAt(t - startedAt);
      const step = rate > 0 ? Math.min(1000 / rate, 50) : 50;
      credit += (workload.rateAt(t - startedAt + step / 2) * step) / 1000;
      t += step;
    }
  } else {
    const vus = new Set<number>();
    const runVu = async (id: number) => {
      let sinceYield = 0;
      while (more() && id < Math.round(workload.vusAt(now() - startedAt))) {
        await iterate(id, undefined);
        const [min, max] = workload.thinkMs;
        if (max > 0) await sleepUntil(now() + min + random() * (max - min), stop.signal);
        else if (++sinceYield >= 64) {
          // A flow with no I/O (or one that throws at once) only yields microtasks: without a turn of
          // the event loop now and then, the deadline timer and SIGINT would never run.
          sinceYield = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      vus.delete(id);
    };
    while (more() && now() < deadline) {
      const target = Math.round(workload.vusAt(now() - startedAt));
      for (let id = 0; id < target; id++) {
        if (!vus.has(id)) {
          vus.add(id);
          track(runVu(id));
        }
      }
      await sleepUntil(Math.min(deadline, now() + 50), stop.signal);
    }
  }
  if (!stop.signal.aborted) {
    // The iteration bound ended the loop, not the clock: every iteration has started, and each may
    // finish by the deadline rather than within the short grace.
    await Promise.race([Promise.allSettled([...inFlight]), sleepUntil(deadline, stop.signal)]);
  }
  stop.abort();
  clearTimeout(timer);
  signal.removeEventListener('abort', onSignal);

  // In-flight iterations get a grace to finish; then every wait and request still open is cut.
  const grace = new Promise<void>((resolve) => setTimeout(resolve, input.graceMs ?? 2000).unref());
  await Promise.race([Promise.allSettled([...inFlight]), grace]);
  if (inFlight.size > 0) client.interrupt();
  await Promise.allSettled([...inFlight]);
  // The end counts the grace: responses that arrive in it were admitted during the workload.
  const endedAt = now();
  input.onWorkload?.(false, summary);

  try {
    if (!input.coordination || (await input.coordination.beforeTeardown()))
      await scenario.teardown?.(plainApi, data);
  } catch {
    // A failed teardown must not lose the measurements; the run's figures are already complete.
  }
  return { workload: summary, interrupted: signal.aborted, startedAt, endedAt };
}
