import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

/**
 * undici's Pool alone. Its package's index loads every part of undici (fetch, WebSocket, caches,
 * mocks, interceptors): 120 ms and 9 MB at each start, and again in each worker thread; the pool
 * and what it needs are a third of that. We drive it through `dispatch` with our own handler, so
 * nothing the index adds to Dispatcher (request, stream, ...) is missed.
 */
export const Pool: typeof UndiciPool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js');
export type Pool = UndiciPool;
