import { describe, expect, it, vi } from 'vitest';
import {
  startThreads,
  type ThreadGroup,
  type ThreadOutcome,
  ThreadsError,
  type ThreadsOptions,
} from '../../src/threads/runner.ts';

// Every thread the runner starts, to see that none is left running (a thread that has exited has id -1).
const started = vi.hoisted(() => [] as { threadId: number }[]);
vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class Recorded extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      super(...args);
      started.push(this);
    }
  }
  return { ...real, Worker: Recorded };
});

type Mode = 'result' | 'fail' | 'throw' | 'exit';
type Message = { type: 'ready' } | { type: 'result'; result: number } | { type: 'failed'; message: string };

const MODULE = new URL('../fixtures/echo-thread.ts', import.meta.url);

/** Threads on the fixture, one per mode; `go` decides which are told to go once all are ready. */
function threads(
  modes: Mode[],
  options: Partial<ThreadsOptions<Message, number>> & { go?(group: ThreadGroup<number>): void } = {},
) {
  let ready = 0;
  const before = started.length;
  const group = startThreads<Message, number>({
    module: MODULE,
    name: 'worker',
    jobs: modes.map((mode, index) => ({ data: { index, mode } })),
    outcome: (message, i): ThreadOutcome<number> | undefined =>
      message.type === 'result'
        ? { ok: true, result: message.result }
        : message.type === 'failed'
          ? { ok: false, message: `worker ${i + 1}: ${message.message}` }
          : undefined,
    relay: (message, _, g) => {
      if (message.type === 'ready' && ++ready === modes.length)
        (options.go ?? ((all) => all.broadcast({ type: 'go' })))(g);
    },
    ...options,
  });
  const mine = () => started.slice(before);
  return { group, mine };
}

describe('startThreads', () => {
  it('gives every result back in the threads order, whatever order they finish in', async () => {
    const settledOrder: number[] = [];
    let post: ((i: number, m: unknown) => void) | undefined;
    const { group, mine } = threads(['result', 'result', 'result'], {
      // The last thread first, then each one's neighbour once it has answered: finished in reverse.
      go: (g) => {
        post = g.post.bind(g);
        g.post(2, { type: 'go' });
      },
      settled: (i) => {
        settledOrder.push(i);
        if (i > 0) post?.(i - 1, { type: 'go' });
      },
    });
    const outcomes = await group.outcomes;
    expect(settledOrder).toEqual([2, 1, 0]);
    expect(outcomes).toEqual([
      { ok: true, result: 0 },
      { ok: true, result: 10 },
      { ok: true, result: 20 },
    ]);
    // They lingered after their results (a listener holds each open): ended by the runner.
    expect(mine()).toHaveLength(3);
    expect(mine().map((w) => w.threadId)).toEqual([-1, -1, -1]);
    expect(group.alive()).toBe(0);
  });

  it('turns a thread that throws, and one that exits, into one line each; the others go on', async () => {
    const { group, mine } = threads(['result', 'throw', 'exit', 'fail']);
    const outcomes = await group.outcomes;
    expect(outcomes).toEqual([
      { ok: true, result: 0 },
      { ok: false, message: 'worker 2 crashed: boom in thread 1' },
      { ok: false, message: 'worker 3 exited (code 3) without a result' },
      { ok: false, message: 'worker 4: thread 3 gave up' },
    ]);
    for (const outcome of outcomes) if (!outcome.ok) expect(outcome.message).not.toMatch(/\n|\bat\b/);
    expect(mine().map((w) => w.threadId)).toEqual([-1, -1, -1, -1]);
  });

  it('with failFast, ends every thread at the first failure and rejects with its line', async () => {
    const { group, mine } = threads(['result', 'throw', 'result'], {
      failFast: true,
      // Only the thrower goes: the others would wait for ever.
      go: (g) => g.post(1, { type: 'go' }),
    });
    await expect(group.outcomes).rejects.toThrow(new ThreadsError('worker 2 crashed: boom in thread 1'));
    expect(mine().map((w) => w.threadId)).toEqual([-1, -1, -1]);
    expect(group.alive()).toBe(0);
  });

  it('terminates every thread when aborted, and rejects once all are gone', async () => {
    const abort = new AbortController();
    const settled: number[] = [];
    const { group, mine } = threads(['result', 'result', 'result'], {
      signal: abort.signal,
      // All ready, none told to go: each would wait for ever.
      go: () => abort.abort(),
      settled: (i) => settled.push(i),
    });
    await expect(group.outcomes).rejects.toThrow(new ThreadsError('worker threads aborted'));
    expect(mine().map((w) => w.threadId)).toEqual([-1, -1, -1]);
    expect(group.alive()).toBe(0);
    // Terminated, not failed: an abort is no thread's outcome.
    expect(settled).toEqual([]);
  });

  it('starts nothing for no jobs', async () => {
    const { group, mine } = threads([]);
    await expect(group.outcomes).resolves.toEqual([]);
    expect(mine()).toEqual([]);
  });
});
