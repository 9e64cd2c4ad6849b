import { connect } from 'node:net';

/** Whether the target accepts a TCP connection: checked before a run, so "unreachable" is exit 3. */
export function reachable(url: URL, timeoutMs = 3000): Promise<boolean> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((done) => {
    // A TCP connect, not an HTTP request: checking the target must not spend its quota.
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: timeoutMs });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
    socket.once('timeout', () => finish(false));
  });
}
