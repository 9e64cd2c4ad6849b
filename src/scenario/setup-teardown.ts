import { formatInstant, parseDuration } from '../api/duration.ts';
import { bounded, PhaseTimeout } from '../client/bounded.ts';
import type { ApiClient } from '../client/client.ts';
import { HeldPastEndError } from '../client/gate.ts';
import type { Api } from '../client/petstore-api.ts';
import type { RunResult } from '../result/types.ts';
import type { Scenario } from './define.ts';

/** How the workers of one run share its setup and teardown. */
export interface Coordination<D> {
  /** Runs `setup` (the first worker) or receives its data; resolves when every worker may start. */
  setup(run: () => Promise<D>): Promise<D>;
  /** After the workload: resolves when every worker's has ended; true for the one that tears down. */
  beforeTeardown(): Promise<boolean>;
}

/** What setup and teardown read of the run. */
interface PhaseInput<D> {
  scenario: Scenario<D>;
  client: ApiClient;
  signal: AbortSignal;
  coordination?: Coordination<D>;
  /**
   * Told as soon as this process's setup has ended, before any wait for a shared start: what
   * setup's requests cost the recorder (its first schema compiles, tens of ms, hundreds on a busy
   * machine) is paid while the others wait too, not at the workload's start, where it once put a
   * fleet's generator 1 half a second behind the others.
   */
  afterSetup?(): void;
}

/** Setup could not finish; `result` holds what its requests measured, when a run built one. */
export class SetupError extends Error {
  override readonly name = 'SetupError';
  result?: RunResult;
}

/** k6's defaults for setupTimeout and teardownTimeout: a phase that hangs must not hang the run. */
const SETUP_TIMEOUT_MS = 60_000;
const TEARDOWN_TIMEOUT_MS = 60_000;

/** Why setup failed, in one line: a server's pause it could not wait out is said in people's units. */
function setupFailure(error: unknown, client: ApiClient, limitMs: number): string {
  if (error instanceof PhaseTimeout)
    return `setup did not finish within ${limitMs / 1000} s (the scenario's setupTimeout)`;
  const held = client.heldPastEnd();
  if (error instanceof HeldPastEndError && held)
    return `setup failed: the key was held until ${formatInstant(held.until)} (${held.by}), past setup's limit of ${limitMs / 1000} s`;
  return `setup failed: ${(error as Error).message}`;
}

/**
 * The scenario's setup within its limit (or, for worker threads, the first worker's, shared):
 * its data, or undefined when the run's signal interrupted it. A setup that fails otherwise throws
 * a SetupError that says why in one line.
 */
export async function runSetup<D>(input: PhaseInput<D>, api: Api): Promise<{ data: D } | undefined> {
  const { scenario, client, signal } = input;
  const setupMs = parseDuration(scenario.setupTimeout ?? SETUP_TIMEOUT_MS, 'setupTimeout');
  const setup = async () => {
    try {
      const data = await bounded(client, setupMs, signal, async () => (await scenario.setup?.(api)) as D);
      input.afterSetup?.();
      return data;
    } catch (error) {
      // Interrupted during setup: no workload, no teardown, a partial result.
      if (signal.aborted) throw error;
      throw new SetupError(setupFailure(error, client, setupMs));
    }
  };
  try {
    return { data: input.coordination ? await input.coordination.setup(setup) : await setup() };
  } catch (error) {
    // Whatever setup threw once it was interrupted, the interrupt is the reason it stopped.
    if (!signal.aborted) throw error;
    return undefined;
  }
}

/**
 * Teardown within its limit, or within `interruptedLimitMs` (what is left of the interrupt's 2 s);
 * it never costs the measurements.
 */
export async function runTeardown<D>(
  input: PhaseInput<D>,
  data: D,
  api: Api,
  interruptedLimitMs: number | undefined,
): Promise<void> {
  const { scenario, client, coordination } = input;
  const limitMs =
    interruptedLimitMs ?? parseDuration(scenario.teardownTimeout ?? TEARDOWN_TIMEOUT_MS, 'teardownTimeout');
  try {
    // Every worker says it has ended, tearing down or not: the one that tears down waits for all.
    if ((coordination && !(await coordination.beforeTeardown())) || !scenario.teardown || limitMs <= 0)
      return;
    // The run's signal has fired already, if it will: teardown's own limit is what bounds it.
    await bounded(client, limitMs, new AbortController().signal, async () => {
      await scenario.teardown?.(api, data);
    });
  } catch {
    // A failed teardown must not lose the measurements; the run's figures are already complete.
  }
}
