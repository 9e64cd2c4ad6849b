import { Redis, type RedisOptions } from 'ioredis';
import { InputError } from './input-error.ts';

/**
 * A quota store's address, as `--quota-store` takes it: `redis://HOST:PORT[/DB]` (or `rediss://`),
 * or `redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME` for a master that Redis Sentinel fails
 * over. `label` is how results and messages name it: no user, no password.
 */
export interface StoreAddress {
  url: string;
  label: string;
}

const SENTINEL = 'redis+sentinel:';

export function parseStoreAddress(text: string, flag = '--quota-store'): StoreAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`${flag}: '${text}' is not a URL (expected redis://HOST:PORT)`);
  }
  if (url.protocol === SENTINEL) {
    sentinelOptions(url, flag);
    const hosts = sentinelHosts(url);
    return { url: url.href, label: `${SENTINEL}//${hosts.join(',')}${url.pathname}` };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new InputError(
      `${flag}: only redis://, rediss:// and redis+sentinel:// stores are supported, got '${url.protocol}'`,
    );
  return { url: url.href, label: `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}` };
}

/** WHATWG URLs keep a list of hosts in `host` only when it is one: the rest is read from the text. */
function sentinelHosts(url: URL): string[] {
  const authority = url.href.slice(`${SENTINEL}//`.length).split('/')[0] ?? '';
  return (authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority)
    .split(',')
    .filter(Boolean);
}

function sentinelOptions(url: URL, flag: string): RedisOptions {
  const hosts = sentinelHosts(url);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (hosts.length === 0 || !name)
    throw new InputError(
      `${flag}: a Sentinel store is redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME`,
    );
  const sentinels = hosts.map((h) => {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
    if (!match) throw new InputError(`${flag}: '${h}' is not HOST:PORT`);
    return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port: Number(match[2] ?? 26379) };
  });
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  return {
    sentinels,
    name,
    ...(password ? { password, sentinelPassword: password } : {}),
    // A failover takes the sentinels a few seconds: asking them again every 200 ms to 1 s follows it.
    sentinelRetryStrategy: (times) => Math.min(1000, 200 * times),
  };
}

export interface ConnectOptions {
  timeoutMs?: number;
  /**
   * Keep reconnecting after a drop, for as long as the connection is used (a generator's quota store:
   * a restarted or failed-over store is met again); else give up after a few tries (the server's).
   */
  persistent?: boolean;
}

/**
 * A Redis connection for the shared quota, both sides' (the generators' store and the reference
 * server's limiter): connected before use, failing within `timeoutMs` with the reason the socket
 * gave (ioredis' own rejection only says "Connection is closed"), and never queueing commands
 * while disconnected: a quota that cannot be read must fail the request that needs it.
 */
export async function connectRedis(url: string, o: ConnectOptions = {}): Promise<Redis> {
  const timeoutMs = o.timeoutMs ?? 3000;
  const parsed = new URL(url);
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: o.persistent ? 0 : 2,
    enableOfflineQueue: false,
    // A command that met a drop is not sent again by the client: its caller decides (a reservation
    // that may have been made is only counted twice, which makes every generator more careful).
    autoResendUnfulfilledCommands: !o.persistent,
    // A stopped store (a paused process, a lost route) must not hold a send's reservation forever.
    ...(o.persistent ? { commandTimeout: timeoutMs } : {}),
    retryStrategy: o.persistent
      ? (times) => Math.min(1000, 100 * 2 ** Math.min(times, 4)) * (0.5 + Math.random() / 2)
      : (times) => (times > 3 ? null : 200 * times),
    // A master demoted by a failover answers writes with READONLY: reconnect, and Sentinel names the new one.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
  const redis =
    parsed.protocol === SENTINEL
      ? new Redis({ ...options, ...sentinelOptions(parsed, 'store') })
      : new Redis(url, options);
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

/** The identity of the Redis server process answering (its `run_id`): another after a restart or a failover. */
export async function serverRunId(redis: Redis): Promise<string> {
  const info = await redis.info('server');
  return /run_id:(\w+)/.exec(info)?.[1] ?? '';
}
