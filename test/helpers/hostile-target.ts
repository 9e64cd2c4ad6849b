import { createServer, type OutgoingHttpHeaders } from 'node:http';
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
