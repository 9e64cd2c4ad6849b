import { createServer } from 'node:net';

/**
 * A loopback port free at the time of asking, for a child process that must be told its port (it
 * cannot report one it chose itself). Another process may take it before the child binds: rare enough
 * on a test machine to accept.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || !address) throw new Error('no free port');
  return address.port;
}
