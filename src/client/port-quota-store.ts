import type { MessagePort } from 'node:worker_threads';
import type { QuotaSpec, QuotaStore } from './quota-store.ts';

type Request =
  | { id: number; op: 'reserve'; key: string; spec: QuotaSpec }
  | { id: number; op: 'pauseLeft'; key: string }
  | { id: number; op: 'pause'; key: string; ms: number };
type Reply = { id: number; value?: number; error?: string };

/**
 * A worker thread's view of the run's quota store, which lives in the main thread: every call is a
 * message there and back (tens of µs), so that the workers of one run pace as one client.
 */
export class PortQuotaStore implements QuotaStore {
  private next = 0;
  private readonly pending = new Map<number, { resolve(v: number): void; reject(e: Error): void }>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.error !== undefined) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.value ?? 0);
    });
    // Only calls in flight keep the thread alive: an idle store must not hold the worker open.
    port.unref();
  }

  private ask(request: Request): Promise<number> {
    this.port.ref();
    return new Promise<number>((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      this.port.postMessage(request);
    }).finally(() => {
      if (this.pending.size === 0) this.port.unref();
    });
  }

  reserve(key: string, spec: QuotaSpec): Promise<number> {
    return this.ask({ id: ++this.next, op: 'reserve', key, spec });
  }

  pauseLeft(key: string): Promise<number> {
    return this.ask({ id: ++this.next, op: 'pauseLeft', key });
  }

  async pause(key: string, ms: number): Promise<void> {
    await this.ask({ id: ++this.next, op: 'pause', key, ms });
  }

  async close(): Promise<void> {
    this.port.close();
  }
}

/** The main thread's side: answers one worker's port from the run's store. */
export function serveQuotaStore(store: QuotaStore, port: MessagePort): void {
  port.on('message', (request: Request) => {
    const answer =
      request.op === 'reserve'
        ? store.reserve(request.key, request.spec)
        : request.op === 'pauseLeft'
          ? store.pauseLeft(request.key)
          : store.pause(request.key, request.ms).then(() => 0);
    answer.then(
      (value) => port.postMessage({ id: request.id, value } satisfies Reply),
      (error: Error) => port.postMessage({ id: request.id, error: error.message } satisfies Reply),
    );
  });
}
