import { afterEach, vi } from 'vitest';
import { loadSpec } from '../../src/api/spec.ts';
import type { Transport } from '../../src/client/client.ts';
import { buildApp } from '../../src/server/app.ts';
import { type ServerOptions, validateServerOptions } from '../../src/server/options.ts';
import type { PetStore } from '../../src/server/store.ts';
import { IN_PROCESS, type InProcessRequest, type Reply } from './http.ts';

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
  distinctInstants();
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
      // A turn of the real event loop: every promise chain the last timer started runs to its end
      // (vitest's async stepping waits two real 1 ms timeouts a step instead), and I/O completes.
      await new Promise<void>((resolve) => realSetImmediate(resolve));
      if (settled) break;
      if (vi.getTimerCount() === 0) {
        idleSince ??= realNow();
        if (realNow() - idleSince > STUCK_MS)
          throw new Error('simulated run stuck: no timer pending and no answer');
        continue;
      }
      idleSince = undefined;
      vi.advanceTimersToNextTimer();
      if (Date.now() - start > limitMs) throw new Error(`simulated run still going after ${limitMs} ms`);
    }
    return await outcome;
  } finally {
    vi.useRealTimers();
  }
}

/**
 * A real clock never reads the same sub-millisecond instant twice; a simulated one would for every
 * event of one step (two virtual users woken together), and a send would tie with the 429 that
 * paused its key, which the checks must then call a violation. So each reading is a microsecond past
 * the one before when the clock has not moved (a millionth of a millisecond is lost in an epoch time
 * of 1.8e12 ms): events keep their order, and no figure moves by anything a check could see.
 */
function distinctInstants(): void {
  const fake = performance.now.bind(performance);
  let last = Number.NEGATIVE_INFINITY;
  performance.now = () => {
    const at = fake();
    last = at > last ? at : last + 1e-3;
    return last;
  };
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
let servers = 0;

/**
 * A round trip of 2 to 6 ms, the same sequence each run: a target that answers in no time at all
 * would put a send and the answer that pauses its key at the same instant, which no socket does.
 */
export function loopbackLatency(seed = 1): (n: number) => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return 2 + ((state >>> 16) % 5);
  };
}

/**
 * A busy machine's round trips: `lowMs` plus up to `spanMs`, and every so often (one answer in
 * `spikeEvery`, by the same sequence) `spikeMs` more: a burst from rest then spreads over tens of
 * milliseconds while requests one after another on a warm socket go quicker.
 */
export function busyLatency(
  seed: number,
  o: { lowMs: number; spanMs: number; spikeEvery: number; spikeMs: number },
): (n: number) => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    const r = state >>> 16;
    return o.lowMs + (r % o.spanMs) + (o.spikeEvery > 0 && r % o.spikeEvery === 0 ? o.spikeMs : 0);
  };
}

/**
 * The reference server as `startServer` builds it, answering through `inject` rather than a socket:
 * its limiters, headers and faults are the same code; the time between a request and its answer is
 * `latencyMs` of simulated time (a constant or a function of the request number).
 */
export async function simulatedServer(
  options: ServerOptions = {},
  latencyMs: number | ((n: number) => number) = loopbackLatency(),
): Promise<SimulatedServer> {
  validateServerOptions(options);
  specOnce ??= loadSpec();
  const { app, store } = buildApp(await specOnce, options);
  await app.ready();
  let requests = 0;
  const answer = async (request: InProcessRequest) => {
    const n = requests++;
    const delay = typeof latencyMs === 'number' ? latencyMs : latencyMs(n);
    const reply = await app.inject({
      method: request.method as 'GET',
      url: request.path,
      headers: request.headers,
      payload: request.body,
    });
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    return { status: reply.statusCode, headers: reply.headers as Reply['headers'], text: reply.body };
  };
  const transport: Transport = (_pool, request) =>
    answer({
      method: request.method,
      path: request.path,
      headers: request.headers as Record<string, string>,
      body: request.body as string | undefined,
    });
  // A name no resolver answers: a request that missed the transport fails instead of reaching a socket.
  const url = `http://simulated-${++servers}.invalid`;
  IN_PROCESS.set(url, answer);
  return {
    transport,
    url,
    store,
    get requests() {
      return requests;
    },
    close: async () => {
      IN_PROCESS.delete(url);
      await app.close();
    },
  };
}

/**
 * `body` in simulated time against a reference server answering in process, closed after: what a
 * test written against `startServer` becomes with `server.transport` given to the client.
 */
export async function withSimulatedServer<T>(
  options: ServerOptions,
  body: (server: SimulatedServer) => Promise<T>,
): Promise<T> {
  specOnce ??= loadSpec();
  await specOnce;
  const server = await simulatedServer(options);
  try {
    return await inSimulatedTime(() => body(server));
  } finally {
    await server.close();
  }
}

/**
 * Reference servers a test file starts, each closed after the test that started it: `start(options)`
 * is a simulated server of `defaults` and `options`, answering `latencyMs` after each request.
 */
export function serversClosedAfterEach(
  defaults: ServerOptions = {},
  latencyMs?: number,
): (options?: ServerOptions) => Promise<SimulatedServer> {
  const servers: SimulatedServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (options = {}) => {
    const s = await simulatedServer({ ...defaults, ...options }, latencyMs);
    servers.push(s);
    return s;
  };
}
