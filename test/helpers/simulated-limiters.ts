import type { Transport } from '../../src/client/client.ts';

/**
 * Third-party limiters as transports in front of a simulated target (test/helpers/simulated.ts),
 * for the logic that answers them in simulated time. Each is the behaviour its real counterpart
 * shows on the wire, which an end-to-end test against the real one keeps honest.
 */

/**
 * nginx `limit_conn N` keyed by the Authorization header with `limit_conn_status 429`: a request of a
 * key that already has N in flight is refused at once with a bare 429 (nginx's HTML page, no
 * Retry-After, no quota headers); the others go upstream.
 */
export function limitConn(upstream: Transport, conn: number): Transport {
  const inFlight = new Map<string, number>();
  return async (pool, request) => {
    const headers = request.headers as Record<string, string>;
    const key = headers.authorization ?? '';
    const now = inFlight.get(key) ?? 0;
    if (now >= conn) {
      return {
        status: 429,
        headers: { 'content-type': 'text/html', server: 'nginx' },
        text: '<html><head><title>429 Too Many Requests</title></head></html>',
      };
    }
    inFlight.set(key, now + 1);
    try {
      return await upstream(pool, request);
    } finally {
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
    }
  };
}
