import type { TenantKey } from '../api/tenants.ts';
import type { ApiClient, Lane } from '../client/client.ts';
import { now } from '../client/clock.ts';

/**
 * How long the server's told budget held the run's keys while the workload ran: each key's wall time
 * held from the workload's start to its end (or to now, for a result taken while it runs), the
 * longest of them with the fields that began its latest hold. Read at the start, the end and for a
 * result, over every key: never per request.
 */
export class BudgetHolds {
  private readonly client: ApiClient;
  private readonly lanes: Map<TenantKey, Lane>;
  /** Each key's hold so far when the workload started (a key made later had none before). */
  private readonly before = new Map<Lane, number>();
  private started = false;
  private stoppedAt: number | undefined;

  constructor(client: ApiClient, lanes: Map<TenantKey, Lane>) {
    this.client = client;
    this.lanes = lanes;
  }

  measure(running: boolean, at: number): void {
    if (running && !this.started) {
      this.started = true;
      for (const lane of this.keys()) this.before.set(lane, lane.budgetHeld(at));
    } else if (!running && this.started) this.stoppedAt ??= at;
  }

  read(): { ms: number; fields: string } | undefined {
    if (!this.started) return undefined;
    const at = this.stoppedAt ?? now();
    let longest: { ms: number; fields: string } | undefined;
    for (const lane of this.keys()) {
      const ms = Math.round(lane.budgetHeld(at) - (this.before.get(lane) ?? 0));
      const fields = lane.budgetTold;
      if (ms > 0 && fields !== undefined && ms > (longest?.ms ?? 0)) longest = { ms, fields };
    }
    return longest;
  }

  private *keys(): Iterable<Lane> {
    yield this.client.ownLane;
    yield* this.lanes.values();
  }
}
