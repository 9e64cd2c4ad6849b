import { describe, expect, it } from 'vitest';
import type { RateWindow } from '../../src/api/plans.ts';
import { now } from '../../src/client/clock.ts';
import { AbortedError, Gate } from '../../src/client/gate.ts';
import { Pacer } from '../../src/client/pacer.ts';
import { MemoryQuotaStore, type QuotaSpec, type QuotaStore } from '../../src/client/quota-store.ts';
import { StoreWatch } from '../../src/client/store-outage.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const never = new AbortController().signal;

/**
 * A store in memory that can be taken away and given back, as another server (empty) or the same:
 * every call fails while it is away, as a Redis that is down does.
 */
class FlakyStore implements QuotaStore {
  inner = new MemoryQuotaStore();
  away = false;
  serverId = 'one';
  reserved = 0;
  reseeds: { index: number; count: number; forMs: number }[] = [];
  readonly watch = new StoreWatch(async () => {
    if (this.away) throw new Error('Connection is closed.');
    return this.serverId;
  }, 'one');

  private check(): void {
    if (this.away) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
  }
  async reserve(key: string, spec: QuotaSpec): Promise<number> {
    this.check();
    this.reserved++;
    return this.inner.reserve(key, spec);
  }
  async pauseLeft(key: string): Promise<number> {
    this.check();
    return this.inner.pauseLeft(key);
  }
  async pause(key: string, ms: number): Promise<void> {
    this.check();
    return this.inner.pause(key, ms);
  }
  async reseed(_key: string, _spec: QuotaSpec, index: number, count: number, forMs: number): Promise<void> {
    this.check();
    this.reseeds.push({ index, count, forMs });
  }
  told: number[][] = [];
  async tell(_key: string, _spec: QuotaSpec, agoMs: readonly number[]): Promise<void> {
    this.check();
    this.told.push([...agoMs]);
  }
  async knows(): Promise<boolean> {
    this.check();
    return this.reserved > 0;
  }
  async close(): Promise<void> {
    this.watch.close();
  }
  /** Away, as a dropped connection says at once (RedisQuotaStore tells its watch on 'close'). */
  goAway(): void {
    this.away = true;
    this.watch.lost(now());
  }
  /** Back as another server that remembers nothing. */
  restartEmpty(): void {
    this.inner = new MemoryQuotaStore();
    this.serverId = 'two';
    this.reserved = 0;
    this.away = false;
  }
}

/** 20 sends a second: the shortest window is 1 s. */
const WINDOWS: RateWindow[] = [{ name: 'second', limit: 20, seconds: 1 }];

function gateOn(store: FlakyStore, localShare?: number): { gate: Gate; pacer: Pacer } {
  const pacer = new Pacer({ windows: WINDOWS, enforce: true, guardMs: 0 });
  return { gate: new Gate(pacer, { store, key: 'k', ...(localShare ? { localShare } : {}) }), pacer };
}

describe('StoreWatch', () => {
  it('records an outage, probes until the store answers, and moves its epoch only for another server', async () => {
    let up = false;
    let id = 'a';
    const watch = new StoreWatch(async () => {
      if (!up) throw new Error('down');
      return id;
    }, 'a');
    watch.lost(now());
    expect(watch.down).toBe(true);
    const back = watch.whenBack(never);
    await sleep(150);
    expect(watch.down).toBe(true);
    up = true;
    expect(await back).toBe(true);
    expect(watch.down).toBe(false);
    expect(watch.epoch).toBe(0);
    const first = watch.outages[0];
    expect(first?.to).toBeGreaterThan(first?.from ?? Number.POSITIVE_INFINITY);

    id = 'b';
    watch.lost(now());
    expect(await watch.whenBack(never)).toBe(true);
    expect(watch.epoch).toBe(1);
    expect(watch.outages).toHaveLength(2);
    watch.close();
  });

  it('lets a waiter go when its signal aborts or the watch closes, saying the store is still away', async () => {
    const watch = new StoreWatch(() => Promise.reject(new Error('down')), 'a');
    watch.lost(now());
    const controller = new AbortController();
    const aborted = watch.whenBack(controller.signal);
    controller.abort();
    expect(await aborted).toBe(false);
    const closed = watch.whenBack(never);
    watch.close();
    expect(await closed).toBe(false);
    expect(watch.outages[0]?.to).toBeUndefined();
  });

  it('starts an outage no earlier than the last one ended, when a call asked before then fails after', async () => {
    let up = false;
    const watch = new StoreWatch(async () => {
      if (!up) throw new Error('down');
      return 'a';
    }, 'a');
    watch.lost(now());
    up = true;
    expect(await watch.whenBack(never)).toBe(true);
    const end = watch.outages[0]?.to ?? Number.NaN;
    // A call asked 200 ms before the probe found the store back fails after it (it met the outage).
    watch.lost(end - 200);
    expect(watch.outages[1]?.from).toBe(end);
    watch.close();
  });

  it('dates an outage from its unanswered call, and pacing resumes counting from when it was found out', () => {
    const watch = new StoreWatch(() => Promise.reject(new Error('down')), 'a');
    const found = now();
    // A call asked 1.5 s ago timed out now: another generator may have reserved in between.
    watch.lost(found - 1500);
    expect(watch.outages[0]?.from).toBe(found - 1500);
    expect(watch.outages[0]?.seenAt).toBeGreaterThanOrEqual(found);
    watch.close();
  });

  it('counts as held every send whose wait overlapped an outage, and no other', () => {
    const watch = new StoreWatch(() => Promise.reject(new Error('down')), 'a');
    watch.lost(1000);
    const outage = watch.outages[0];
    if (!outage) throw new Error('no outage recorded');
    outage.to = 2000;
    watch.countHeld(500, 900); // done before it began
    watch.countHeld(500, 1500); // queued before, done during
    watch.countHeld(1200, 2500); // queued during
    watch.countHeld(2100, 2200); // after it
    expect(outage.held).toBe(2);
    watch.close();
  });
});

describe('Gate with a store that goes away', () => {
  it('sends nothing while the store is away, and goes on once it answers', async () => {
    const store = new FlakyStore();
    const { gate } = gateOn(store);
    await gate.acquire(never);
    store.goAway();
    const held = gate.acquire(never);
    let admitted = false;
    held.then(() => {
      admitted = true;
    });
    await sleep(300);
    expect(admitted).toBe(false);
    expect(store.watch.down).toBe(true);
    store.away = false;
    await held;
    expect(admitted).toBe(true);
    const [outage] = store.watch.outages;
    expect(outage?.to).toBeDefined();
    expect(outage?.held).toBe(1);
    expect(outage?.resumed).toBe('intact');
    await store.close();
  });

  it("puts back what the target still counts when the store comes back empty, from the server's Remaining", async () => {
    const store = new FlakyStore();
    const { gate, pacer } = gateOn(store);
    const sends: number[] = [];
    for (let i = 0; i < 5; i++) sends.push((await gate.acquire(never)).seq);
    // The target's word after the fifth: 15 left of 20 until a Reset 10 s away.
    const reset = Math.ceil(Date.now() / 1000) + 10;
    for (const seq of sends) pacer.observe(seq, { limit: 20, remaining: 15, reset }, now(), 'admitted');
    store.goAway();
    const held = gate.acquire(never);
    await sleep(100);
    store.restartEmpty();
    await held;
    expect(store.reseeds).toHaveLength(1);
    expect(store.reseeds[0]?.index).toBe(0);
    // 15 left as of the fifth send: 5 counted; the sixth, now admitted, is the store's own.
    expect(store.reseeds[0]?.count).toBe(5);
    expect(store.reseeds[0]?.forMs).toBeGreaterThan(8000);
    expect(store.watch.outages[0]?.resumed).toBe('server');
    await store.close();
  });

  it('holds one window from the outage when the store comes back empty and the target told nothing', async () => {
    const store = new FlakyStore();
    const { gate } = gateOn(store);
    await gate.acquire(never);
    store.goAway();
    const downAt = now();
    const held = gate.acquire(never);
    await sleep(50);
    store.restartEmpty();
    await held;
    const admittedAt = now();
    // One window of 1 s from the outage's start, at least: every send before it has aged out.
    expect(admittedAt - downAt).toBeGreaterThanOrEqual(950);
    expect(store.watch.outages[0]?.resumed).toBe('held');
    expect(store.reseeds).toHaveLength(0);
    await store.close();
  });

  it('ends a send held by an away store with AbortedError when the run stops', async () => {
    const store = new FlakyStore();
    const { gate } = gateOn(store);
    await gate.acquire(never);
    // Away without a word: the reservation itself fails, as a command timing out does.
    store.away = true;
    const controller = new AbortController();
    const held = gate.acquire(controller.signal);
    await sleep(100);
    controller.abort();
    await expect(held).rejects.toBeInstanceOf(AbortedError);
    expect(store.watch.outages[0]?.to).toBeUndefined();
    expect(store.watch.outages[0]?.held).toBe(1);
    await store.close();
  });

  it('local-share: paces alone at 1/N of the plan while the store is away, and tells the store those sends once it is back', async () => {
    const store = new FlakyStore();
    const { gate } = gateOn(store, 2);
    await gate.acquire(never);
    store.goAway();
    const sentAt: number[] = [];
    const until = now() + 1500;
    while (now() < until) {
      await gate.acquire(never);
      sentAt.push(now());
    }
    // Sending goes on while the store is away (waiting would send none).
    expect(sentAt.length).toBeGreaterThanOrEqual(5);
    const [outage] = store.watch.outages;
    expect(outage?.sentWithout).toBe(sentAt.length);
    expect(outage?.held).toBe(0);
    expect(outage?.resumed).toBe('local-share');
    store.away = false;
    await store.watch.whenBack(never);
    await gate.acquire(never);
    expect(store.told).toHaveLength(1);
    const told = store.told[0] ?? [];
    expect(told).toHaveLength(sentAt.length);
    // 20 a second for the key, 10 for this generator's share: in no second more than 10 of its own,
    // read from the send times the gate kept (ms before it told the store).
    for (const ago of told)
      expect(told.filter((a) => a >= ago && a < ago + 1000).length).toBeLessThanOrEqual(10);
    await store.close();
  });
});
