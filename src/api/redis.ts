import type { Redis, RedisOptions } from 'ioredis';
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
  if (text.startsWith(`${SENTINEL}//`)) {
    const { hosts, name } = sentinelParts(text, flag);
    return { url: text, label: `${SENTINEL}//${hosts.map((h) => `${h.host}:${h.port}`).join(',')}/${name}` };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`${flag}: '${text}' is not a URL (expected redis://HOST:PORT)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new InputError(
      `${flag}: only redis://, rediss:// and redis+sentinel:// stores are supported, got '${url.protocol}'`,
    );
  return { url: url.href, label: `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}` };
}

/**
 * A Sentinel address by hand: WHATWG URLs take one host, and a list of them (`a:1,b:2`) is not one.
 * The password, if any, is the sentinels' and the master's alike.
 */
function sentinelParts(
  text: string,
  flag: string,
): { hosts: { host: string; port: number }[]; name: string; password?: string } {
  const match = /^redis\+sentinel:\/\/(?:([^@/]*)@)?([^/@]+)\/([^/?#]+)\/?$/.exec(text);
  if (!match)
    throw new InputError(
      `${flag}: a Sentinel store is redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME`,
    );
  const hosts = (match[2] as string).split(',').map((h) => {
    const parts = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(h);
    if (!parts) throw new InputError(`${flag}: '${h}' is not HOST:PORT`);
    return { host: (parts[1] as string).replace(/^\[|\]$/g, ''), port: Number(parts[2] ?? 26379) };
  });
  const secret = match[1] ? decodeURIComponent(match[1].slice(match[1].indexOf(':') + 1)) : '';
  return { hosts, name: decodeURIComponent(match[3] as string), ...(secret ? { password: secret } : {}) };
}

function sentinelOptions(text: string): RedisOptions {
  const { hosts, name, password } = sentinelParts(text, 'store');
  return {
    sentinels: hosts,
    name,
    ...(password ? { password, sentinelPassword: password } : {}),
    // A failover takes the sentinels a few seconds: asking them again every 200 ms to 1 s follows it.
    sentinelRetryStrategy: (times) => Math.min(1000, 200 * times),
  };
}

/**
 * How long a store in use may leave a command unanswered before it counts as away. A store answers
 * in milliseconds; sends wait for it either way (fail closed), but an outage is only recorded, and
 * probed for, once a command fails. At 3 s, a route lost for 3 s was answered late through TCP's
 * retransmission, or found only as it ended: the record said 0.1 s of an outage of 3.
 */
export const STORE_SILENT_MS = 1500;

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
  // Loaded here, not with this module: only a run with --quota-store (or a server with one) needs it.
  const { Redis: Client } = await import('ioredis');
  const timeoutMs = o.timeoutMs ?? 3000;
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: o.persistent ? 0 : 2,
    enableOfflineQueue: false,
    // A command that met a drop is not sent again by the client: its caller decides (a reservation
    // that may have been made is only counted twice, which makes every generator more careful).
    autoResendUnfulfilledCommands: !o.persistent,
    // A stopped store (a paused process, a lost route) must not hold a send's reservation forever.
    ...(o.persistent ? { commandTimeout: STORE_SILENT_MS } : {}),
    retryStrategy: o.persistent
      ? (times) => Math.min(1000, 100 * 2 ** Math.min(times, 4)) * (0.5 + Math.random() / 2)
      : (times) => (times > 3 ? null : 200 * times),
    // A master demoted by a failover answers writes with READONLY: reconnect, and Sentinel names the new one.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
  const redis = url.startsWith(`${SENTINEL}//`)
    ? new Client({ ...options, ...sentinelOptions(url) })
    : new Client(url, options);
  let last: Error | undefined;
  // Errors are answered by the calls that meet them; without a listener ioredis would print them.
  redis.on('error', (error: Error) => {
    last = error;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    // Sentinels that do not answer are asked again and again: connect() alone would never fail.
    await Promise.race([
      redis.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs + 500);
      }),
    ]);
  } catch (error) {
    redis.disconnect();
    throw new Error(inWords(last ?? (error as Error)));
  } finally {
    clearTimeout(timer);
  }
  return redis;
}

/** Why a connection failed, in words rather than the client library's. */
function inWords(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ETIMEDOUT' || /timed? ?out/i.test(error.message)) return 'no answer in time';
  if (/sentinels are unreachable/i.test(error.message)) return 'no sentinel answered';
  if (/NOAUTH|WRONGPASS|invalid password/i.test(error.message)) return 'authentication refused';
  if (/sentinel/i.test(error.message) && /master/i.test(error.message))
    return 'the sentinels know no such master';
  return error.message;
}

/** The identity of the Redis server process answering (its `run_id`): another after a restart or a failover. */
export async function serverRunId(redis: Redis): Promise<string> {
  const info = await redis.info('server');
  return /run_id:(\w+)/.exec(info)?.[1] ?? '';
}
