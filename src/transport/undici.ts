import { createRequire } from 'node:module';
import type { Client as UndiciClient, Pool as UndiciPool, ProxyAgent as UndiciProxyAgent } from 'undici';

const require = createRequire(import.meta.url);

/**
 * undici's Pool alone. Its package's index loads every part of undici (fetch, WebSocket, caches,
 * mocks, interceptors): 120 ms and 9 MB at each start, and again in each worker thread; the pool
 * and what it needs are a third of that. We drive it through `dispatch` with our own handler, so
 * nothing the index adds to Dispatcher (request, stream, ...) is missed.
 */
export const Pool: typeof UndiciPool = require('undici/lib/dispatcher/pool.js');
export type Pool = UndiciPool;

/** The pool's connection, which the pool has loaded already. */
export const Client: typeof UndiciClient = require('undici/lib/dispatcher/client.js');
export type Client = UndiciClient;

/**
 * Loaded on use: only a run through a proxy needs it. From undici's index, which adds `connect` (the
 * CONNECT of the tunnel) to every dispatcher: the proxy agent alone would have none to call.
 */
export function proxyAgent(): typeof UndiciProxyAgent {
  return require('undici').ProxyAgent;
}

/**
 * The key under which a connection keeps what it negotiated ({ version: 'h1' | 'h2' }): undici has
 * no public way to tell which protocol carried a response. test/transport holds it against nginx.
 */
export const kHTTPContext: symbol = require('undici/lib/core/symbols.js').kHTTPContext;
