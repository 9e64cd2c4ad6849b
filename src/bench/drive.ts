import autocannon from 'autocannon';
import { after, now } from '../client/clock.ts';
import type { TlsOptions } from '../transport/network.ts';
import { shareOf } from './coordinated-omission.ts';
import type { BenchFeed, RawHeaders } from './feed.ts';
import { ResponsePairer } from './pairing.ts';
import type { BenchRequest } from './request-cycle.ts';

export interface DriveInput {
  /** `http://host:port`: autocannon's connections go here; the base path is in each request's path. */
  origin: string;
  /** Each request with its own headers (the key where its operation's scheme puts it). */
  cycle: readonly BenchRequest[];
  connections: number;
  pipelining: number;
  /** Requests per second over all connections; undefined: as fast as the target answers. */
  rate: number | undefined;
  durationMs: number;
  timeoutMs: number;
  /** A client certificate for an https target (autocannon never verifies the target's: checked before). */
  tls?: TlsOptions | undefined;
}

export interface DriveOutcome {
  startedAt: number;
  endedAt: number;
  /** `response` events without their `onResponse` (see pairing.ts); 0 unless autocannon changes. */
  unpaired: number;
}

/** What each connection keeps: its interval at a fixed rate, and where it is in the cycle. */
interface ConnectionState {
  intervalMs: number | undefined;
  /** Index of the request last answered or lost: the next ones in the cycle are in flight. */
  last: number;
}

type Context = Record<string, number | undefined>;

function createdId(body: string): number | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The connections autocannon opens: at a fixed rate never more than requests per second, as it caps them itself. */
export function effectiveConnections(connections: number, rate: number | undefined): number {
  return rate === undefined ? connections : Math.min(connections, rate);
}

/**
 * The cycle as autocannon's requests: each answer handed to the pairer, a creator's id kept on its
 * connection for the consumer after it.
 */
function cycleRequests(cycle: DriveInput['cycle'], pairer: ResponsePairer): autocannon.Request[] {
  return cycle.map((r, index) => {
    const request: autocannon.Request = {
      // autocannon's list of methods lacks 3.2's QUERY; bench drives the built-in document, which has none.
      method: r.method as autocannon.Request['method'],
      path: r.path,
      headers: r.headers,
      onResponse: (status, body, context, headers) => {
        pairer.answered(index, status, body, headers as RawHeaders | undefined);
        if (r.provides !== undefined && status >= 200 && status < 300)
          (context as Context)[r.provides] = createdId(body);
      },
    };
    if (r.body !== undefined) request.body = r.body;
    const consumes = r.consumes;
    if (consumes) {
      // Filled at send time with the id the request before it created on this connection; without
      // one (its creation failed) autocannon starts the cycle again, as documented for a falsy return.
      request.setupRequest = (req, context) => {
        const id = (context as Context)[consumes.resource];
        if (id === undefined) return undefined as unknown as autocannon.Request;
        (context as Context)[consumes.resource] = undefined;
        req.path = `${consumes.before}${id}${consumes.after}`;
        return req;
      };
    }
    return request;
  });
}

/** Waits for the run to finish, calling `stop` when its duration is over or the signal aborts. */
async function stoppedAfter(
  finished: Promise<void>,
  durationMs: number,
  stop: () => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  // Any --duration: a plain timer past 2^31-1 ms would fire at once.
  const cancelTimer = after(durationMs, stop);
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  try {
    await finished;
  } finally {
    cancelTimer();
    signal?.removeEventListener('abort', stop);
  }
}

/**
 * Drives autocannon in this thread over the request cycle for the duration (or until `signal`), and
 * hands every answer and every lost request to `feed`. Per request it costs a mailbox write, one
 * record and, for creators and consumers only, a JSON parse and a path: autocannon sends the cycle's
 * other requests as the bytes it built once.
 */
export async function drive(input: DriveInput, feed: BenchFeed, signal?: AbortSignal): Promise<DriveOutcome> {
  const pairer = new ResponsePairer();
  const length = input.cycle.length;
  const connections = effectiveConnections(input.connections, input.rate);
  const states = new WeakMap<object, ConnectionState>();
  let created = 0;

  const requests = cycleRequests(input.cycle, pairer);

  // A lost request is the next one of its connection's cycle: autocannon walks the cycle in order on
  // each connection, so after the request last answered, the following `pipelining` are in flight.
  const lost = (state: ConnectionState, code: string, sentAt: number) => {
    state.last = (state.last + 1) % length;
    if (sentAt <= cutoff) feed.transportError(state.last, code, sentAt, now());
  };

  // The benchmark's window: requests sent from now until the duration is over (or an interrupt).
  // autocannon notices its end at its next sample, up to `sampleInt` later, and sends until then (at
  // a fixed rate, a whole new second's budget at once): those requests are not recorded, so that the
  // result covers the window it states. Answers to requests sent within it count when they come later.
  const startedAt = now();
  let cutoff = startedAt + input.durationMs;
  let lastReceivedAt = startedAt;
  let settle: (error: unknown) => void = () => {};
  const finished = new Promise<void>((resolve, reject) => {
    settle = (error) => (error ? reject(error) : resolve());
  });
  const instance = autocannon(
    {
      url: input.origin,
      connections,
      pipelining: input.pipelining,
      duration: input.durationMs / 1000,
      // autocannon notices the end at its next sample: every 100 ms rather than every second.
      sampleInt: 100,
      timeout: input.timeoutMs / 1000,
      requests,
      // At a fixed rate, our own correction (coordinated-omission.ts): autocannon's back-fills 1 ms steps.
      ...(input.rate === undefined ? {} : { overallRate: input.rate, ignoreCoordinatedOmission: true }),
      skipAggregateResult: true,
      ...(input.tls ? { tlsOptions: input.tls } : {}),
      setupClient: (client) => {
        const i = created++;
        const state: ConnectionState = {
          intervalMs: input.rate === undefined ? undefined : 1000 / shareOf(input.rate, connections, i),
          last: -1,
        };
        states.set(client, state);
        const events: NodeJS.EventEmitter = client;
        // One error ends every request in flight on the connection (autocannon counts `pipelining`).
        events.on('connError', (error: NodeJS.ErrnoException) => {
          const at = now();
          for (let k = 0; k < input.pipelining; k++) lost(state, error.code ?? 'ECONNERROR', at);
        });
        // Emitted once per request in flight, `timeout` after the last write on the connection.
        events.on('timeout', () => lost(state, 'ETIMEDOUT', now() - input.timeoutMs));
      },
    },
    settle,
  );
  instance.on('response', (client, status, _bytes, responseTime) => {
    const receivedAt = now();
    const index = pairer.take(status);
    if (index < 0) return;
    const state = states.get(client);
    if (state) state.last = index;
    if (receivedAt - responseTime > cutoff) return;
    lastReceivedAt = receivedAt;
    feed.response(index, status, pairer.body, pairer.headers, receivedAt, responseTime, state?.intervalMs);
  });
  const stop = () => {
    cutoff = Math.min(cutoff, now());
    instance.stop();
  };
  await stoppedAfter(finished, input.durationMs, stop, signal);
  return { startedAt, endedAt: Math.max(cutoff, lastReceivedAt), unpaired: pairer.unpaired };
}
