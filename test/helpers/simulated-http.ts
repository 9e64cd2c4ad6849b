import type { Call, Reply } from './http.ts';
import type { SimulatedServer } from './simulated.ts';

/**
 * One request to a simulated reference server (test/helpers/simulated.ts), as `call` of http.ts
 * sends it to a real one: `key: null` sends no Authorization header; default is the free demo key.
 */
export async function simulatedCall(
  server: SimulatedServer,
  path: string,
  options: Call = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? 'free-demo-key' : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  // The simulated server's transport ignores the pool: it answers through the app in process.
  const response = await server.transport(undefined as never, {
    method: (options.method ?? 'GET') as 'GET',
    path,
    headers,
    body,
  });
  const type = String(response.headers['content-type'] ?? '');
  return {
    status: response.status,
    headers: response.headers,
    text: response.text,
    body: type.includes('json') && response.text ? JSON.parse(response.text) : response.text,
  };
}
