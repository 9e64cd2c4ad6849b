import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { slowDown } from 'express-slow-down';
import { Agent, request } from 'undici';
import type { RunningLimiter } from './limiters.ts';

/**
 * express-slow-down 3 on express 5 in front of an upstream: past `delayAfter` requests of a key in
 * its window, each waits `stepMs` more than the last (up to `maxDelayMs`). It refuses nothing and
 * says nothing in headers: the delaying limiter a run can tell only from timing. GET only, which is
 * all the runs that start it send.
 */
export interface SlowDownOptions {
  upstream: string;
  delayAfter: number;
  stepMs: number;
  windowMs: number;
  maxDelayMs?: number;
}

export async function startExpressSlowDown(options: SlowDownOptions): Promise<RunningLimiter> {
  const agent = new Agent();
  const app = express();
  app.use(
    slowDown({
      windowMs: options.windowMs,
      delayAfter: options.delayAfter,
      delayMs: (used) => (used - options.delayAfter) * options.stepMs,
      maxDelayMs: options.maxDelayMs ?? Number.POSITIVE_INFINITY,
      // Keyed by API key: every request comes from 127.0.0.1.
      keyGenerator: (req) => req.headers.authorization ?? 'anonymous',
    }),
  );
  app.use(async (req, res) => {
    const authorization = req.headers.authorization;
    const upstream = await request(`${options.upstream.replace(/\/+$/, '')}${req.originalUrl}`, {
      dispatcher: agent,
      headers: authorization ? { authorization } : {},
    });
    res.status(upstream.statusCode);
    const contentType = upstream.headers['content-type'];
    if (typeof contentType === 'string') res.setHeader('content-type', contentType);
    res.end(Buffer.from(await upstream.body.arrayBuffer()));
  });
  const server: Server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('express-slow-down is not listening');
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
      await agent.close();
    },
  };
}
