import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { RunResult } from './types.ts';

/**
 * The results of worker threads (`run --workers`, `bench --workers`) as they stand, while they run:
 * each thread records on its own, so the main thread asks each for its result so far over a port of
 * its own. Asked in passing for a checkpoint (`ask`), or, on a second signal that exits at once,
 * synchronously (`askNow`), with the main thread blocked until the threads answer or time runs out.
 */

interface Ask {
  id: number;
}
interface Answer {
  id: number;
  result: RunResult | undefined;
}

/** In a worker thread: answer each ask on `port` with `take()`. The port never holds the thread open. */
export function answerSnapshots(port: MessagePort, take: () => RunResult | undefined): void {
  port.on('message', (ask: Ask) => {
    let result: RunResult | undefined;
    try {
      result = take();
    } catch {
      // A result that cannot be built now is no answer; the main thread keeps the last one.
    }
    port.postMessage({ id: ask.id, result } satisfies Answer);
  });
  port.unref();
}

/** In the main thread: one port per worker thread, in the threads' order. */
export class ThreadSnapshots {
  private asked = 0;
  /** Each thread's latest answer. */
  private readonly latest: (RunResult | undefined)[];
  /** Threads that have ended (their result is in): not asked, not waited for. */
  private readonly over = new Set<number>();
  /** Who waits for the answers to an ask, by its id. */
  private readonly waiting = new Map<number, (thread: number) => void>();
  private readonly ports: readonly MessagePort[];

  constructor(ports: readonly MessagePort[]) {
    this.ports = ports;
    this.latest = ports.map(() => undefined);
    ports.forEach((port, i) => {
      port.on('message', (answer: Answer) => this.keep(i, answer));
      port.unref();
    });
  }

  /** Each thread's result as it stands; a thread that does not answer within `timeoutMs` gives its last answer. */
  async ask(timeoutMs: number): Promise<(RunResult | undefined)[]> {
    const id = ++this.asked;
    const pending = new Set(this.running());
    if (pending.size > 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.waiting.set(id, (i) => {
          pending.delete(i);
          if (pending.size > 0) return;
          clearTimeout(timer);
          resolve();
        });
        for (const i of pending) this.ports[i]?.postMessage({ id } satisfies Ask);
      });
    this.waiting.delete(id);
    return [...this.latest];
  }

  /** As `ask`, synchronously: this thread blocks (up to `timeoutMs`) while the others answer. */
  askNow(timeoutMs: number): (RunResult | undefined)[] {
    const id = ++this.asked;
    const pending = new Set(this.running());
    for (const i of pending) this.ports[i]?.postMessage({ id } satisfies Ask);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const deadline = performance.now() + timeoutMs;
    while (pending.size > 0 && performance.now() < deadline) {
      for (const i of pending) {
        const port = this.ports[i] as MessagePort;
        for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
          const answer = m.message as Answer;
          this.keep(i, answer);
          if (answer.id === id) pending.delete(i);
        }
      }
      // The event loop is not ours to run here: sleep a little between looks.
      Atomics.wait(pause, 0, 0, 5);
    }
    return [...this.latest];
  }

  /** Thread `i` has ended: its own result stands for it from now on. */
  ended(i: number): void {
    this.over.add(i);
    for (const answered of this.waiting.values()) answered(i);
  }

  close(): void {
    for (const port of this.ports) port.close();
  }

  private running(): number[] {
    return [...this.ports.keys()].filter((i) => !this.over.has(i));
  }

  private keep(i: number, answer: Answer): void {
    if (answer.result) this.latest[i] = answer.result;
    this.waiting.get(answer.id)?.(i);
  }
}
