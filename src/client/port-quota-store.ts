import type { MessagePort } from 'node:worker_threads';
import { now } from './clock.ts';
import type { QuotaSpec, QuotaStore } from './quota-store.ts';

type Request =
  /** The spec travels with a key's first reservation only: it is fixed for the run. */
  | { id: number; op: 'reserve'; key: string; count: number; spec?: QuotaSpec }
  | { id: number; op: 'pauseLeft'; key: string }
  | { id: number; op: 'pause'; key: string; ms: number };
type Reply = { id: number; value?: number; values?: number[]; error?: string };
/** Pushed to every worker when any pauses a key: the slots it holds are void. */
type Notice = { paused: string };

/** Slots fetched at once when the quota does not bind, at most; one at a time when it does. */
const MAX_BATCH = 64;

/**
 * A worker thread's view of the run's quota store, which lives in the main thread. A message there
 * and back costs far more CPU than a send (two threads woken), so while the quota does not bind (every
 * slot free at once) a worker fetches slots in batches, doubling up to 64, and uses them while they
 * are fresh; as soon as a slot must be waited for, it goes back to one at a time, which is exact.
 * A pause anywhere voids every worker's batch (the main thread pushes it to all).
 */
export class PortQuotaStore implements QuotaStore {
  private next = 0;
  private readonly sent = new Map<string, QuotaSpec>();
  private readonly slots = new Map<string, number[]>();
  private readonly batch = new Map<string, number>();
  private readonly pending = new Map<number, { resolve(r: Reply): void; reject(e: Error): void }>();
  private readonly port: MessagePort;

  constructor(port: MessagePort) {
    this.port = port;
    port.on('message', (message: Reply | Notice) => {
      if ('paused' in message) {
        this.slots.delete(message.paused);
        this.batch.delete(message.paused);
        return;
      }
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error));
      else waiter.resolve(message);
    });
    // Only calls in flight keep the thread alive: an idle store must not hold the worker open.
    port.unref();
  }

  private ask(request: Request): Promise<Reply> {
    this.port.ref();
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      this.port.postMessage(request);
    }).finally(() => {
      if (this.pending.size === 0) this.port.unref();
    });
  }

  async reserve(key: string, spec: QuotaSpec): Promise<number> {
    const held = this.slots.get(key);
    if (held) {
      const t = now();
      while (held.length > 0 && (held[0] as number) < t - spec.lateMs) held.shift();
      const slot = held.shift();
      if (slot !== undefined) return slot - t;
    }
    const count = this.batch.get(key) ?? 1;
    const first = this.sent.get(key) !== spec;
    if (first) this.sent.set(key, spec);
    const reply = await this.ask({ id: ++this.next, op: 'reserve', key, count, ...(first ? { spec } : {}) });
    const waits = reply.values ?? [];
    const t = now();
    // Free at once, all of them: the quota is far off, fetch more next time. Else one at a time.
    const free = waits.every((w) => w <= 1);
    this.batch.set(key, free ? Math.min(MAX_BATCH, count * 2) : 1);
    this.slots.set(
      key,
      waits.slice(1).map((w) => t + w),
    );
    return waits[0] ?? 0;
  }

  async pauseLeft(key: string): Promise<number> {
    return (await this.ask({ id: ++this.next, op: 'pauseLeft', key })).value ?? 0;
  }

  async pause(key: string, ms: number): Promise<void> {
    this.slots.delete(key);
    this.batch.delete(key);
    await this.ask({ id: ++this.next, op: 'pause', key, ms });
  }

  async close(): Promise<void> {
    this.port.close();
  }
}

/** The main thread's side: the run's store, answering every worker's port, and telling all of a pause. */
export class QuotaHub {
  private readonly ports: MessagePort[] = [];
  private readonly store: QuotaStore;

  constructor(store: QuotaStore) {
    this.store = store;
  }

  serve(port: MessagePort): void {
    this.ports.push(port);
    const specs = new Map<string, QuotaSpec>();
    port.on('message', (request: Request) => {
      this.answer(request, specs).then(
        (reply) => port.postMessage(reply satisfies Reply),
        (error: Error) => port.postMessage({ id: request.id, error: error.message } satisfies Reply),
      );
    });
  }

  private async answer(request: Request, specs: Map<string, QuotaSpec>): Promise<Reply> {
    switch (request.op) {
      case 'reserve': {
        if (request.spec) specs.set(request.key, request.spec);
        const spec = specs.get(request.key);
        if (!spec) throw new Error(`no quota spec for '${request.key}'`);
        const values: number[] = [];
        for (let i = 0; i < request.count; i++) values.push(await this.store.reserve(request.key, spec));
        return { id: request.id, values };
      }
      case 'pauseLeft':
        return { id: request.id, value: await this.store.pauseLeft(request.key) };
      case 'pause':
        await this.store.pause(request.key, request.ms);
        for (const p of this.ports) p.postMessage({ paused: request.key } satisfies Notice);
        return { id: request.id, value: 0 };
    }
  }
}
