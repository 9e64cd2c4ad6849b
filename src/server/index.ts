import type { Redis } from 'ioredis';
import { InputError } from '../api/input-error.ts';
import { connectRedis } from '../api/redis.ts';
import { loadSpec } from '../api/spec.ts';
import { buildApp } from './app.ts';
import { SERVER_DEFAULTS, type ServerOptions, validateServerOptions } from './options.ts';
import type { PetStore } from './store.ts';

export type { FaultOptions } from './faults.ts';
export type { ServerOptions } from './options.ts';

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  /** The in-memory store, for tests that need to look behind the API. */
  store: PetStore;
  close(): Promise<void>;
}

/** Starts the reference pet store server on loopback (port 0 by default: a free port). */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  validateServerOptions(options);
  const spec = await loadSpec();
  const redis = options.quotaStore ? await connectStore(options.quotaStore) : undefined;
  const { app, store } = buildApp(spec, options, redis);
  app.addHook('onClose', async () => {
    await redis?.quit().catch(() => redis.disconnect());
  });
  const host = options.host ?? SERVER_DEFAULTS.host;
  await app.listen({ host, port: options.port ?? SERVER_DEFAULTS.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    store,
    close: async () => {
      // Keep-alive clients would hold close() open; a test or a CLI stop must not hang on them.
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

/** The limiter's store for `quotaStore`; an unreachable one fails the start, in one line. */
async function connectStore(url: string): Promise<Redis> {
  try {
    return await connectRedis(url, { persistent: true });
  } catch (error) {
    throw new InputError(
      `quotaStore ${url.replace(/\/\/[^@/]*@/, '//')}: cannot connect (${(error as Error).message})`,
    );
  }
}
