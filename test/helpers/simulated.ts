import { vi } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import type { Transport } from '../../src/client/client.ts';
import { buildApp } from '../../src/server/app.ts';
import { type ServerOptions, validateServerOptions } from '../../src/server/options.ts';
import type { PetStore } from '../../src/server/store.ts';

/**
 * Simulated time for the logic that waits: pacing, gates, limiter models, backoff, capacity's phases.
 * The client reads time from the global `performance` and `Date` and waits on the global timers
 * (src/client/clock.ts), and the reference server's limiters read `Date.now()`: with those faked, a
 * 14 s paced run against a limiter model takes as long as its computation. What it cannot prove is
 * what a real socket and a busy event loop do to a schedule; each real component keeps an
 * end-to-end test of its own for that.
 */

const FAKED = [
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  'Date',
  'performance',
] as const;

/** Taken before any test fakes them: a stuck body is judged on the real clock. */
const realSetImmediate = globalThis.setImmediate;
const realNow = Date.now;
/** How long a body may wait on something outside simulated time (a file read) before it is stuck. */
const STUCK_MS = 10_000;

/**
 * Runs `body` with the clock faked, moving it from one due timer to the next until `body` settles.
 * Nothing outside the process is waited on, so a body left with no timer and no answer is stuck for
 * good: that fails at once instead of spinning.
 */
export async function inSimulatedTime<T>(body: () => Promise<T>, limitMs = 3_600_000): Promise<T> {
  vi.useFakeTimers({ toFake: [...FAKED], now: Date.now() });
  const start = Date.now();
  try {
    let settled = false;
    const outcome = body().finally(() => {
      settled = true;
    });
    // A rejection is read below; until then it must not count as unhandled.
    outcome.catch(() => {});
    let idleSince: number | undefined;
    while (!settled) {
      if (vi.getTimerCount() === 0) {
        // Waiting on something outside simulated time (a file read): a turn of the real event loop.
        await new Promise<void>((resolve) => realSetImmediate(resolve));
        idleSince ??= realNow();
        if (realNow() - idleSince > STUCK_MS)
          throw new Error('simulated run stuck: no timer pending and no answer');
        continue;
      }
      idleSince = undefined;
      await vi.advanceTimersToNextTimerAsync();
      if (Date.now() - start > limitMs) throw new Error(`simulated run still going after ${limitMs} ms`);
    }
    return await outcome;
  } finally {
    vi.useRealTimers();
  }
}

export interface SimulatedServer {
  /** The client's transport: each request goes to the reference server's app in process. */
  transport: Transport;
  url: string;
  store: PetStore;
  /** Requests answered, for tests that hold the client to what it sent. */
  readonly requests: number;
  close(): Promise<void>;
}

let specOnce: ReturnType<typeof loadSpec> | undefined;

/**
 * The reference server as `startServer` builds it, answering through `inject` rather than a socket:
 * its limiters, headers and faults are the same code; the time between a request and its answer is
 * `latencyMs` of simulated time (a constant or a function of the request number).
 */
export async function simulatedServer(
  options: ServerOptions = {},
  latencyMs: number | ((n: number) => number) = 0,
): Promise<SimulatedServer> {
  validateServerOptions(options);
  specOnce ??= loadSpec();
  const { app, store } = buildApp(await specOnce, options);
  await app.ready();
  let requests = 0;
  const transport: Transport = async (_pool, request) => {
    const n = requests++;
    const delay = typeof latencyMs === 'number' ? latencyMs : latencyMs(n);
    const reply = await app.inject({
      method: request.method as 'GET',
      url: request.path,
      headers: request.headers as Record<string, string>,
      payload: request.body as string | undefined,
    });
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    return { status: reply.statusCode, headers: reply.headers as never, text: reply.body };
  };
  return {
    transport,
    url: 'http://127.0.0.1:9',
    store,
    get requests() {
      return requests;
    },
    close: () => app.close(),
  };
}
