import { Redis } from 'ioredis';

/**
 * A Redis connection for the shared quota, both sides' (the generators' store and the reference
 * server's limiter): connected before use, failing within `timeoutMs` with the reason the socket
 * gave (ioredis' own rejection only says "Connection is closed"), and never queueing commands
 * while disconnected: a quota that cannot be read must fail the request that needs it.
 */
export async function connectRedis(url: string, timeoutMs = 3000): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: false,
    retryStrategy: (times) => (times > 3 ? null : 200 * times),
  });
  let last: Error | undefined;
  // Errors are answered by the calls that meet them; without a listener ioredis would print them.
  redis.on('error', (error: Error) => {
    last = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw last ?? error;
  }
  return redis;
}
