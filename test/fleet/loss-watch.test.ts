import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ShardHeld } from '../../src/fleet/fleet-store.ts';
import { LossWatch } from '../../src/fleet/loss-watch.ts';

const shard = (index: number, o: Partial<ShardHeld> = {}): ShardHeld => ({
  index,
  host: undefined,
  alive: false,
  finished: false,
  stored: false,
  result: undefined,
  snapshot: undefined,
  ...o,
});

describe('a lost generator, as one reader sees it', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is silent with no result for two heartbeats of reads that reached the store', () => {
    const watch = new LossWatch();
    watch.seen([shard(1, { alive: true }), shard(2), shard(3, { stored: true })]);
    expect([1, 2, 3].map((i) => watch.lost(shard(i)))).toEqual([false, false, false]);
    vi.advanceTimersByTime(1999);
    watch.seen([shard(1, { alive: true }), shard(2), shard(3, { stored: true })]);
    expect(watch.lost(shard(2))).toBe(false);
    vi.advanceTimersByTime(1);
    expect(watch.lost(shard(2))).toBe(true);
    // Alive or stored is never lost.
    expect(watch.lost(shard(1))).toBe(false);
    expect(watch.lost(shard(3))).toBe(false);
  });

  it("starts counting again after a read that failed, or a heartbeat: a store's outage expires every key", () => {
    const watch = new LossWatch();
    watch.seen([shard(2)]);
    vi.advanceTimersByTime(1500);
    watch.storeAway();
    vi.advanceTimersByTime(5000);
    // Back: every heartbeat key had expired meanwhile; a living generator beats again within a second.
    watch.seen([shard(2)]);
    expect(watch.lost(shard(2))).toBe(false);
    vi.advanceTimersByTime(900);
    watch.seen([shard(2, { alive: true })]);
    vi.advanceTimersByTime(3000);
    watch.seen([shard(2, { alive: true })]);
    expect(watch.lost(shard(2))).toBe(false);
  });
});
