import { setMaxListeners } from 'node:events';
import type { Operation } from '../api/operations.ts';
import type { PacingCause } from '../api/pacing-causes.ts';
import type { TenantKey } from '../api/tenants.ts';
import type { SpacingState } from './adaptive-spacing.ts';
import { ClientCore } from './client-core.ts';
import type { ApiResponse, Caller, CallInput, ClientOptions, HeldPastEnd } from './client-types.ts';
import { Lane } from './lane.ts';
import type { Scheduler } from './scheduler.ts';

// The client's public face: the types a flow and a run use, and the lanes a tenant mix calls through.
export type {
  ApiResponse,
  Caller,
  CallInput,
  ClientOptions,
  HeldPastEnd,
  Transport,
} from './client-types.ts';
export { keysByCause, Lane } from './lane.ts';

/**
 * The plan-aware client: every request of a key passes its Gate (pacing, server budget, 429 pause),
 * every attempt goes to the recorder, and 429s, 5xx and transport errors are retried under the rules
 * of retry-policy.ts rather than surfaced to the scenario as failures it must handle. `call` sends
 * with the client's own key; `lane(tenant)` gives a tenant's key its own pacing beside it.
 */
export class ApiClient implements Caller {
  readonly operations: ReadonlyMap<string, Operation>;
  private readonly core: ClientCore;
  private readonly own: Lane;

  constructor(options: ClientOptions) {
    const core = new ClientCore(options);
    this.core = core;
    this.operations = core.operations;
    this.own = new Lane(
      core,
      options.apiKey,
      undefined,
      core.pacerPlan(options.windows, options.enforce ?? true),
      options.sharedQuota,
    );
  }

  call<T = unknown>(operationId: string, input?: CallInput, scheduledAt?: number): Promise<ApiResponse<T>> {
    return this.own.call<T>(operationId, input, scheduledAt);
  }

  preparing(on: boolean): void {
    this.own.preparing(on);
  }

  /**
   * A key of a tenant mix: its own Pacer (its plan's windows, raw mode for `enforce: false`; the ban
   * guard stays), Gate, 429 pause and key (placed where each operation's scheme says); the pool, the
   * sink, the retry budget and the run's close, drain and interrupt are the client's. Its attempts
   * carry the tenant's label and the tenant. Cheap (a few hundred bytes, no timer): build one per tenant up front. A lane never
   * goes through the shared quota store: a mix is spread over workers and generators by its keys, so
   * each key lives in one generator and its quota is already one (and a send costs no round trip).
   */
  lane(t: TenantKey): Lane {
    const core = this.core;
    return new Lane(core, t.key, t.tenant, core.pacerPlan(t.tenant.windows, t.tenant.enforce), undefined);
  }

  /** The one scheduler every wait of this client's keys goes through (pacing, pauses, backoff). */
  get scheduler(): Scheduler {
    return this.core.context.scheduler;
  }

  /**
   * Sends that cannot leave by `at` (epoch ms) fail at once with HeldPastEndError rather than wait:
   * the run sets its workload's end (grace included), its setup's and its teardown's limits. Every
   * lane reads it from one shared place.
   */
  closeAt(at: number): void {
    this.core.context.closesAt = at;
  }

  /**
   * On: no new send leaves, on any lane (each ends at once with AbortedError), while requests in
   * flight may still answer and be recorded; waits under way end at their next look at the pacer. An
   * interrupt drains the workload so that its grace is spent on answers, not on new requests.
   */
  drain(on: boolean): void {
    this.core.context.draining = on;
  }

  /** What the client's own key's pacing learned of the server's limiter. */
  spacingState(): SpacingState {
    return this.own.spacingState();
  }

  /** The latest hold, over every lane, that outlived a close: a pause, or a quota, the run could not wait out. */
  heldPastEnd(): HeldPastEnd | undefined {
    return this.core.held;
  }

  /**
   * What holds the client's own key's next request back right now (for the live status line), and
   * for a hold the server made, what it said (`told`: its fields or its pause's words).
   */
  pacingState(): { cause: PacingCause; until: number; told?: string } {
    const state = this.own.pacingState();
    const told = this.own.heldBy(state.cause);
    return told === undefined ? state : { ...state, told };
  }

  /** The client's own key (setup's and teardown's, and the workload's outside a tenant mix). */
  get ownLane(): Lane {
    return this.own;
  }

  /**
   * Ends every wait (pacing, pause, backoff) and every request in flight, on every lane, with
   * AbortedError; calls made afterwards work as before. A run calls it when its time is up and the
   * grace has passed.
   */
  interrupt(): void {
    const core = this.core;
    core.stop.abort();
    core.stop = new AbortController();
    setMaxListeners(0, core.stop.signal);
    // Requests in flight end with the old pool. Destroying a pool, rather than giving every request
    // an AbortSignal, keeps a listener registration off each request of the hot path.
    const old = core.pool;
    core.pool = core.newPool();
    old.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.core.pool.close();
  }
}
