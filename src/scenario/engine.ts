import { seededRandom } from '../api/random.ts';
import type { TenantKey, TenantRef } from '../api/tenants.ts';
import type { ApiClient, ApiResponse, Caller, CallInput } from '../client/client.ts';
import { after, now, sleepUntil } from '../client/clock.ts';
import { AbortedError, HeldPastEndError } from '../client/gate.ts';
import { type CallFn, PetstoreApi, petstoreApi } from '../client/petstore-api.ts';
import type { WorkloadSummary } from '../result/types.ts';
import type { Flow, FlowContext, Scenario } from './define.ts';
import { InFlight } from './in-flight.ts';
import { type Coordination, runSetup, runTeardown, SetupError } from './setup-teardown.ts';
import type { TenantLoad } from './tenant-load.ts';
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
  /** Told when this process's setup has ended, before waiting for a shared start. */
  afterSetup?(): void;
  /**
   * A tenant mix: every arrival (or virtual user) belongs to one tenant and calls through its key.
   * An open workload's rate is each group's; `maxInFlight` bounds each key's iterations in flight.
   */
  tenants?: EngineTenants;
  /** Setup and teardown call through this (default the client's own key). */
  setupCaller?: Caller;
}

export interface EngineTenants {
  loads: readonly TenantLoad[];
  /** The caller of a tenant's key (its own pacing); asked once per tenant. */
  caller(t: TenantKey): Caller;
}

export interface EngineOutput {
  workload: WorkloadSummary;
  interrupted: boolean;
  /** Epoch ms when traffic started (after setup) and stopped (before teardown). */
  startedAt: number;
  endedAt: number;
}

export type { Coordination };
export { SetupError };

/**
 * After SIGINT or SIGTERM the process is gone within 2 s: in-flight iterations get until 1 s after
 * the signal, teardown until 1.4 s, which leaves 0.6 s to build and write the result and stop the
 * embedded server.
 */
const INTERRUPT_GRACE_MS = 1000;
const INTERRUPT_TEARDOWN_END_MS = 1400;

// IterationApi routes every call itself; the base class's caller is never used.
const unusedCaller: CallFn = () => Promise.reject(new Error('unreachable'));

/** One iteration's API: its first call carries the iteration's due time (open model). */
class IterationApi extends PetstoreApi {
  private readonly client: Caller;
  private due: number | undefined;

  constructor(client: Caller, due: number | undefined) {
    super(unusedCaller);
    this.client = client;
    this.due = due;
  }
  override call<T = unknown>(operationId: string, input: CallInput = {}): Promise<ApiResponse<T>> {
    const due = this.due;
    if (due === undefined) return this.client.call<T>(operationId, input);
    this.due = undefined;
    return this.client.call<T>(operationId, input, due);
  }
}

class IterationContext<D> implements FlowContext<D> {
  readonly data: D;
  readonly vu: number;
  readonly iteration: number;
  readonly random: () => number;
  readonly tenant: TenantRef | undefined;

  constructor(data: D, vu: number, iteration: number, random: () => number, tenant: TenantRef | undefined) {
    this.data = data;
    this.vu = vu;
    this.iteration = iteration;
    this.random = random;
    this.tenant = tenant;
  }
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

/** The workload's shared state while it runs: what each stage of `runScenario` reads and moves. */
interface WorkloadRun<D> {
  input: EngineInput<D>;
  data: D;
  summary: WorkloadSummary;
  random: () => number;
  pickFlow: () => Flow<D>;
  startedAt: number;
  deadline: number;
  /** Aborted at the deadline, on the run's signal, or by the iteration bound's end. */
  stop: AbortController;
  /** When the run's signal came (SIGINT, SIGTERM, a threshold), if it did. */
  interruptedAt?: number;
  started: number;
  inFlight: InFlight;
  /** A tenant mix: each tenant's caller, and its iterations in flight (by tenant index). */
  lanes?: { callers: Caller[]; inFlight: Uint16Array };
}

/**
 * Runs setup, the workload and teardown of a scenario through one client. The open model schedules
 * iteration starts by the clock and records each call's due time, so a late generator or a slow
 * server shows in response time; the closed model runs N virtual users back to back.
 */
export async function runScenario<D>(input: EngineInput<D>): Promise<EngineOutput> {
  const { scenario, client, signal } = input;
  const random = seededRandom(input.seed);
  const summary: WorkloadSummary = {
    iterations: 0,
    droppedIterations: 0,
    failedIterations: 0,
    flows: Object.fromEntries(scenario.flows.map((f) => [f.name, { iterations: 0, failures: 0 }])),
  };
  const setupCaller = input.setupCaller ?? client;
  const plainApi = petstoreApi(setupCaller.call.bind(setupCaller) as CallFn);
  setupCaller.preparing?.(true);
  const setup = await runSetup(input, plainApi);
  setupCaller.preparing?.(false);
  if (!setup) {
    const at = now();
    return { workload: summary, interrupted: true, startedAt: at, endedAt: at };
  }

  input.onWorkload?.(true, summary);
  const startedAt = now();
  const run: WorkloadRun<D> = {
    input,
    data: setup.data,
    summary,
    random,
    pickFlow: flowPicker(scenario.flows, random),
    startedAt,
    deadline: startedAt + input.workload.durationMs,
    stop: new AbortController(),
    started: 0,
    inFlight: new InFlight(),
    ...(input.tenants ? { lanes: tenantLanes(input.tenants) } : {}),
  };
  const graceMs = input.graceMs ?? 2000;
  await driveWorkload(run, graceMs);
  const endedAt = await afterTheEnd(run, graceMs);
  input.onWorkload?.(false, summary);

  const interruptedLimitMs =
    run.interruptedAt === undefined ? undefined : run.interruptedAt + INTERRUPT_TEARDOWN_END_MS - now();
  setupCaller.preparing?.(true);
  await runTeardown(input, run.data, plainApi, interruptedLimitMs);
  return { workload: summary, interrupted: signal.aborted, startedAt, endedAt };
}

/** The workload until its deadline, its iteration bound, or the run's signal. */
async function driveWorkload<D>(run: WorkloadRun<D>, graceMs: number): Promise<void> {
  const { client, signal, workload, tenants } = run.input;
  // No send leaves after the grace: one the client would hold past it is not waited for.
  client.closeAt(run.deadline + graceMs);
  const onSignal = () => {
    run.interruptedAt ??= now();
    client.drain(true);
    run.stop.abort();
  };
  signal.addEventListener('abort', onSignal, { once: true });
  // Interrupted during setup: no workload at all (the listener would never fire for a past abort).
  if (signal.aborted) onSignal();
  const cancelDeadline = after(workload.durationMs, () => run.stop.abort());
  if (workload.kind === 'open') {
    if (tenants) await Promise.all(tenants.loads.map((load) => driveOpen(run, load)));
    else await driveOpen(run);
  } else await driveClosed(run);
  if (!run.stop.signal.aborted) {
    // The iteration bound ended the loop, not the clock: every iteration has started, and each may
    // finish by the deadline rather than within the short grace.
    await Promise.race([run.inFlight.settled(), sleepUntil(run.deadline, run.stop.signal)]);
  }
  run.stop.abort();
  cancelDeadline();
  signal.removeEventListener('abort', onSignal);
}

/**
 * In-flight iterations get a grace to finish; then every wait and request still open is cut.
 * Returns the workload's end, which counts the grace: responses that arrive in it were admitted
 * during the workload.
 */
async function afterTheEnd<D>(run: WorkloadRun<D>, graceMs: number): Promise<number> {
  const client = run.input.client;
  const graceEnds =
    run.interruptedAt === undefined ? now() + graceMs : run.interruptedAt + INTERRUPT_GRACE_MS;
  const graceOver = new AbortController();
  await Promise.race([run.inFlight.settled(), sleepUntil(graceEnds, graceOver.signal)]);
  // A grace timer left armed would keep the process alive for nothing.
  graceOver.abort();
  if (run.inFlight.size > 0) client.interrupt();
  await run.inFlight.settled();
  client.closeAt(Number.POSITIVE_INFINITY);
  client.drain(false);
  return now();
}

/**
 * One iteration of a picked flow; true when it ended because the client could send nothing more
 * before the run closes. It counts itself in flight, in the run and for its tenant, from its call
 * to its end (an async function runs up to its first await when called).
 */
async function iterate<D>(
  run: WorkloadRun<D>,
  vu: number,
  scheduledAt: number | undefined,
  tenant?: TenantRef,
): Promise<boolean> {
  const { summary, input } = run;
  const counts = tenant ? run.lanes?.inFlight : undefined;
  const index = tenant?.index ?? 0;
  const iteration = run.started++;
  const flow = run.pickFlow();
  const ctx = new IterationContext(run.data, vu, iteration, run.random, tenant);
  const stats = summary.flows[flow.name] as WorkloadSummary['flows'][string];
  const caller = tenant ? (run.lanes?.callers[tenant.index] as Caller) : input.client;
  run.inFlight.enter();
  if (counts) counts[index] = (counts[index] as number) + 1;
  try {
    await flow.run(new IterationApi(caller, scheduledAt), ctx);
    stats.iterations++;
    summary.iterations++;
  } catch (error) {
    if (error instanceof AbortedError) return error instanceof HeldPastEndError;
    stats.iterations++;
    stats.failures++;
    summary.iterations++;
    summary.failedIterations++;
    stats.firstError ??= String((error as Error).message ?? error).slice(0, 300);
  } finally {
    if (counts) counts[index] = (counts[index] as number) - 1;
    run.inFlight.leave();
  }
  return false;
}

function more<D>(run: WorkloadRun<D>): boolean {
  const bound = run.input.workload.iterations;
  return !run.stop.signal.aborted && (bound === undefined || run.started < bound);
}

/** A virtual user counts in flight until it ends (it never rejects: it catches what its flows throw). */
function track<D>(run: WorkloadRun<D>, p: Promise<unknown>): void {
  run.inFlight.enter();
  p.then(run.inFlight.leave, run.inFlight.leave);
}

/**
 * A mix's iterations in flight across all its keys, at most: thousands of keys held by a slow or
 * pausing target would otherwise pile up a hundred iterations each (about half a kilobyte apiece).
 */
export const TENANT_RUN_MAX_IN_FLIGHT = 10_000;

/** Each tenant's caller, asked once; per-key in-flight counts start at 0. */
function tenantLanes(tenants: EngineTenants): { callers: Caller[]; inFlight: Uint16Array } {
  const callers: Caller[] = [];
  for (const load of tenants.loads) for (const t of load.tenants) callers[t.tenant.index] = tenants.caller(t);
  return { callers, inFlight: new Uint16Array(callers.length) };
}

/**
 * One iteration of a tenant, unless the key has `maxInFlight` iterations in flight already (then
 * it is dropped and counted, as one over the run's cap is without tenants): a key held back by its
 * own quota must not take the whole run's in-flight budget from the others.
 */
function startTenantIteration<D>(run: WorkloadRun<D>, tenant: TenantRef, vu: number, due: number): void {
  const inFlight = run.lanes?.inFlight as Uint16Array;
  if (
    (inFlight[tenant.index] as number) >= Math.min(65_535, run.input.workload.maxInFlight) ||
    run.inFlight.size >= TENANT_RUN_MAX_IN_FLIGHT
  ) {
    run.summary.droppedIterations++;
    return;
  }
  // It counts itself in flight, for the key and the run, until it ends.
  void iterate(run, vu, due, tenant);
}

/** The open model's finest step: iterations due within it start with one due time. */
const MIN_OPEN_STEP_MS = 0.01;
/** Iterations started (or dropped) behind schedule between two turns of the event loop. */
const OPEN_YIELD_EVERY = 1000;

/**
 * Open model: iterations start on the clock's schedule, whatever the earlier ones are doing. With a
 * tenant load, the group's arrivals go to its tenants in turn, so each key gets the group's rate
 * over its keys, evenly spaced, from one timer for the whole group (not one per key).
 */
async function driveOpen<D>(run: WorkloadRun<D>, load?: TenantLoad): Promise<void> {
  const { workload } = run.input;
  const { startedAt } = run;
  const rateAt = load ? load.rateAt : workload.rateAt;
  if (load && load.tenants.length === 0) return;
  let turn = 0;
  // An iteration is due where the integral of the rate crosses the next whole number. Steps of at
  // most 50 ms (midpoint rule) follow a ramp, even one starting from 0, as well as a constant rate.
  // The schedule counts from the start: at an epoch's magnitude (1.8e12 ms) a step under 0.24 µs
  // (a rate over 4 million a second) added nothing, and the loop never ended.
  let elapsed = load?.startMs ?? 0;
  let credit = 0;
  let sinceYield = 0;
  while (more(run) && elapsed < workload.durationMs) {
    if (credit >= 1 - 1e-9) {
      const t = startedAt + elapsed;
      // A timer per iteration would cost more than the request at thousands a second: iterations
      // due within a millisecond start together, with their own due times kept.
      if (t - now() > 1) {
        await sleepUntil(t, run.stop.signal);
        sinceYield = 0;
      } else if (++sinceYield >= OPEN_YIELD_EVERY) {
        // Behind schedule nothing above waits: a turn of the event loop now and then lets the
        // deadline, the ticks and SIGINT run.
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (!more(run)) break;
      if (load) {
        credit -= 1;
        const member = load.tenants[turn] as TenantKey;
        turn = turn + 1 === load.tenants.length ? 0 : turn + 1;
        startTenantIteration(run, member.tenant, member.tenant.index, t);
        continue;
      }
      // Behind schedule, iterations start at once with their due time kept: the lateness is measured.
      // With every slot in flight, all that are due now are dropped at once.
      if (run.inFlight.size >= workload.maxInFlight) {
        const due = Math.max(1, Math.floor(credit + 1e-9));
        run.summary.droppedIterations += due;
        credit -= due;
      } else {
        credit -= 1;
        void iterate(run, run.inFlight.size, t);
      }
      continue;
    }
    const rate = rateAt(elapsed);
    // Iterations due within 10 µs share a due time: at millions a second, a step per iteration would
    // cost more than the iterations.
    const step = rate > 0 ? Math.max(MIN_OPEN_STEP_MS, Math.min(1000 / rate, 50)) : 50;
    credit += (rateAt(elapsed + step / 2) * step) / 1000;
    elapsed += step;
  }
  // Ended by the clock while behind its schedule (a machine too busy for the rate): what fell due
  // before the deadline and never reached the loop did not start either. Dropped, and counted.
  const bound = workload.iterations;
  if (run.interruptedAt === undefined && (bound === undefined || run.started < bound))
    run.summary.droppedIterations += owedBefore(rateAt, elapsed, credit, workload.durationMs);
}

/**
 * Iterations the schedule still owed from `elapsed` to the workload's end, `credit` (due at `elapsed`)
 * included; none once the schedule reached the end (what it owes then is due after it).
 */
function owedBefore(rateAt: (ms: number) => number, elapsed: number, credit: number, endMs: number): number {
  if (elapsed >= endMs) return 0;
  let owed = credit;
  for (let at = elapsed; at < endMs; at += 50) {
    const step = Math.min(50, endMs - at);
    owed += (rateAt(at + step / 2) * step) / 1000;
  }
  return Math.floor(owed + 1e-9);
}

/**
 * Closed model: virtual users, each running iterations back to back, as many as the ramp says.
 * With a tenant mix, user `id` belongs to tenant `id` modulo the tenants (spread over the groups in
 * the mix's order), and waits for its group's start.
 */
async function driveClosed<D>(run: WorkloadRun<D>): Promise<void> {
  const { workload } = run.input;
  const members = run.input.tenants?.loads.flatMap((l) => l.tenants.map((t) => ({ t, startMs: l.startMs })));
  // Thousands of tenants' users wait on the client's one scheduler, not on a timer each.
  const scheduler = run.input.client.scheduler;
  const sleep = members ? scheduler.sleepUntil.bind(scheduler) : sleepUntil;
  const vus = new Set<number>();
  const runVu = async (id: number) => {
    const member = members && members.length > 0 ? members[id % members.length] : undefined;
    if (member) await sleep(run.startedAt + member.startMs, run.stop.signal);
    let sinceYield = 0;
    while (more(run) && id < Math.round(workload.vusAt(now() - run.startedAt))) {
      // Held past the run's close (a Retry-After of years): this user has nothing left to send.
      if (await iterate(run, id, undefined, member?.t.tenant)) await sleep(run.deadline, run.stop.signal);
      const [min, max] = workload.thinkMs;
      if (max > 0) await sleep(now() + min + run.random() * (max - min), run.stop.signal);
      else if (++sinceYield >= 64) {
        // A flow with no I/O (or one that throws at once) only yields microtasks: without a turn of
        // the event loop now and then, the deadline timer and SIGINT would never run.
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    vus.delete(id);
  };
  while (more(run) && now() < run.deadline) {
    const target = Math.round(workload.vusAt(now() - run.startedAt));
    for (let id = 0; id < target; id++) {
      if (!vus.has(id)) {
        vus.add(id);
        track(run, runVu(id));
      }
    }
    await sleepUntil(Math.min(run.deadline, now() + 50), run.stop.signal);
  }
}
