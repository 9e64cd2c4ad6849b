import { once } from 'node:events';
import { createServer } from 'node:http';
import { type Dispatcher, Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { now } from '../../src/client/clock.ts';
import { send } from '../../src/client/transport.ts';

/** A dispatcher that answers every request through the handler as `answer` says, on no socket. */
function fake(answer: (handler: Dispatcher.DispatchHandler) => void): Dispatcher {
  return {
    dispatch: (_options: unknown, handler: Dispatcher.DispatchHandler) => {
      answer(handler);
      return true;
    },
  } as unknown as Dispatcher;
}

const controller = {} as Dispatcher.DispatchController;
const request = { path: '/pets', method: 'GET' } as const;

function respond(status: number, body: string): Dispatcher {
  return fake((h) => {
    h.onResponseStart?.(controller, status, { 'content-type': 'text/html' }, '');
    h.onResponseData?.(controller, Buffer.from(body));
    h.onResponseEnd?.(controller, {});
  });
}

describe('send: what a response or a failure is, as the recorder counts it', () => {
  it('an answer: its status, headers and text, HTTP/1.1 unless a connection said otherwise', async () => {
    await expect(send(respond(200, '[]'), { ...request })).resolves.toEqual({
      status: 200,
      headers: { 'content-type': 'text/html' },
      text: '[]',
      protocol: 'HTTP/1.1',
    });
  });

  it("nginx's 400 pages for a client certificate missing or refused are the TLS failures they are", async () => {
    const missing = '<html><head><title>400 No required SSL certificate was sent</title></head></html>';
    const refused = '<html><head><title>400 The SSL certificate error</title></head></html>';
    await expect(send(respond(400, missing), { ...request })).rejects.toMatchObject({
      code: 'CLIENT_CERT_REQUIRED',
    });
    await expect(send(respond(400, refused), { ...request })).rejects.toMatchObject({
      code: 'CLIENT_CERT_REFUSED',
    });
    // The same words in another status, or another 400, are an answer of the API.
    await expect(send(respond(400, '{"message":"bad name"}'), { ...request })).resolves.toMatchObject({
      status: 400,
    });
    await expect(send(respond(200, missing), { ...request })).resolves.toMatchObject({ status: 200 });
  });

  it("an HTTP/2 connection closed by the server's GOAWAY fails its request in flight as H2_GOAWAY, other socket errors as they are", async () => {
    const failing = (message: string) =>
      fake((h) =>
        h.onResponseError?.(controller, Object.assign(new Error(message), { code: 'UND_ERR_SOCKET' })),
      );
    await expect(
      send(failing('HTTP/2: "GOAWAY" frame received with code 0'), { ...request }),
    ).rejects.toMatchObject({
      code: 'H2_GOAWAY',
    });
    await expect(send(failing('other side closed'), { ...request })).rejects.toMatchObject({
      code: 'UND_ERR_SOCKET',
    });
  });
});

describe('send: when a request left', () => {
  it('tells its departures as undici writes it, on a real socket, before the answer', async () => {
    let arrivedAt = 0;
    const server = createServer((_req, res) => {
      arrivedAt = now();
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const pool = new Pool(`http://127.0.0.1:${port}`);
    const told: [number, number][] = [];
    try {
      const before = now();
      const response = await send(pool, { ...request }, { departed: (seq, at) => told.push([seq, at]) }, 7);
      expect(response.text).toBe('ok');
      expect(told).toHaveLength(1);
      const [seq, at] = told[0] as [number, number];
      expect(seq).toBe(7);
      // Written after it was asked for and before the server read it (the clock's granularity allowed).
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(arrivedAt + 1);
    } finally {
      await pool.close();
      server.close();
    }
  });
});
