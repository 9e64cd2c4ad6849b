import { createServer, type OutgoingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostileTarget {
  url: string;
  /** Requests it received (answered or not). */
  requests(): number;
  close(): Promise<void>;
}

/**
 * A target that misbehaves as a real one may: `silent` accepts connections and never answers; a
 * status with headers answers every request alike (a 429 with a Retry-After of 31 years). On
 * 127.0.0.1 and a free port; `close` drops the connections it holds open.
 */
export async function hostileTarget(
  behaviour: 'silent' | { status: number; headers: OutgoingHttpHeaders },
): Promise<HostileTarget> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    if (behaviour === 'silent') return;
    res.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers });
    res.end(JSON.stringify({ code: 'rate_limited', message: 'slow down', status: behaviour.status }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every request answered 429, `Retry-After` as given (delay-seconds or an HTTP-date). */
export const rateLimitedFor = (retryAfter: string) =>
  hostileTarget({ status: 429, headers: { 'retry-after': retryAfter } });

export interface FreezableProxy {
  url: string;
  /** Requests forwarded so far. */
  forwarded(): number;
  /** From now on every request is held, never answered: a target that hangs mid-run. */
  freeze(): void;
  close(): Promise<void>;
}

/**
 * A proxy on 127.0.0.1 in front of `target` that forwards every request until `freeze`, then holds
 * them all: a command interrupted after that cannot finish its in-flight requests, so its first
 * Ctrl-C's wind-down lasts (a request timeout, a grace) and a second Ctrl-C meets a run still going.
 */
export async function freezableProxy(target: string): Promise<FreezableProxy> {
  const to = new URL(target);
  let frozen = false;
  let forwarded = 0;
  const server = createServer((req, res) => {
    if (frozen) {
      req.resume();
      return;
    }
    forwarded++;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded: () => forwarded,
    freeze: () => {
      frozen = true;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
