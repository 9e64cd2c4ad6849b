import { now } from '../client/clock.ts';
import { LOST_AFTER_MS, type ShardHeld } from './fleet-store.ts';

/**
 * How long this generator must itself see a shard silent, over reads that reached the store, before
 * it is lost: two of its heartbeats. A heartbeat key also expires while the store is away (a
 * failover, this generator's own cut), and a living generator beats again within a second of its
 * return; a read that fails starts every count again.
 */
const CONFIRM_MS = (2 * LOST_AFTER_MS) / 5;

/**
 * Which shards are lost: no result stored and no heartbeat for 5 s on the store's clock, confirmed
 * by this reader's own reads (so that an outage of the store, or of this generator's link to it,
 * never makes generators that are running look lost).
 */
export class LossWatch {
  private readonly since = new Map<number, number>();

  /** A read of every shard that reached the store. */
  seen(shards: readonly ShardHeld[]): void {
    for (const s of shards) {
      if (s.alive || s.stored) this.since.delete(s.index);
      else if (!this.since.has(s.index)) this.since.set(s.index, now());
    }
  }

  /** A read that did not reach the store: nothing is known of anyone's silence. */
  storeAway(): void {
    this.since.clear();
  }

  lost(s: ShardHeld): boolean {
    const since = this.since.get(s.index);
    return since !== undefined && now() - since >= CONFIRM_MS;
  }
}
