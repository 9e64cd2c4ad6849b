import { setMaxListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import type { Operation } from '../api/operations.ts';
import type { RateWindow } from '../api/plans.ts';
import { compilePath, type PathTemplate } from '../api/request.ts';
import { newDispatcher } from '../transport/dispatcher.ts';
import { RetryBudget } from './backoff.ts';
import type { ClientOptions, HeldPastEnd, Transport } from './client-types.ts';
import { GateContext } from './gate.ts';
import { PacerPlan } from './pacer.ts';
import { Scheduler } from './scheduler.ts';
import { senderFor } from './transport.ts';

/**
 * What every key of a client shares: the connection pool, the sink, the retry budget, the run's
 * close, drain and interrupt, the scheduler of all waits, and the plans' pacing constants.
 */
export class ClientCore {
  readonly options: ClientOptions;
  readonly operations: ReadonlyMap<string, Operation>;
  readonly templates: ReadonlyMap<Operation, PathTemplate>;
  readonly origin: string;
  readonly basePath: string;
  pool: Dispatcher;
  readonly budget: RetryBudget;
  stop = new AbortController();
  readonly context = new GateContext(new Scheduler());
  readonly send: Transport;
  /** The latest hold that outlived a close, over every key. */
  held: HeldPastEnd | undefined;
  /** One PacerPlan per plan's windows (the same array for every tenant of a group) and mode. */
  private readonly plans = [new WeakMap<readonly RateWindow[], PacerPlan>(), new WeakMap()] as const;

  constructor(options: ClientOptions) {
    this.options = options;
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/$/, '');
    this.operations = new Map(options.operations.map((op) => [op.id, op]));
    this.templates = new Map(options.operations.map((op) => [op, compilePath(op.path)]));
    this.pool = this.newPool();
    setMaxListeners(0, this.stop.signal);
    this.budget = new RetryBudget(options.retryBudget ?? 0.1);
    this.send = options.transport ?? senderFor(options.network);
  }

  pacerPlan(windows: readonly RateWindow[], enforce: boolean): PacerPlan {
    const cache = this.plans[enforce ? 1 : 0];
    let plan = cache.get(windows);
    if (plan === undefined) {
      plan = new PacerPlan({
        windows,
        enforce,
        maxOvershoot: this.options.allowBanRisk ? Number.POSITIVE_INFINITY : undefined,
        limiter: this.options.limiter,
        maxInFlight: this.options.maxInFlight,
      });
      cache.set(windows, plan);
    }
    return plan;
  }

  newPool(): Dispatcher {
    const shape = { connections: this.options.connections ?? 64, keepAliveTimeout: 30_000 };
    return newDispatcher(this.origin, shape, this.options.network);
  }
}
